import type { Adapter, AdapterPayload } from 'oidc-provider';
import { isRecord, type Collection, type Store } from './store.js';

interface StoredRecord {
  payload: AdapterPayload;
  /** Epoch milliseconds; null for records without expiry (clients). */
  expiresAt: number | null;
}

/** oidc-provider models whose records belong to a grant and die with it. */
const GRANT_BOUND_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken'] as const;

function parseRecord(raw: unknown): StoredRecord | undefined {
  if (!isRecord(raw) || !isRecord(raw['payload'])) return undefined;
  const expiresAt = raw['expiresAt'];
  return {
    payload: raw['payload'],
    expiresAt: typeof expiresAt === 'number' ? expiresAt : null,
  };
}

/**
 * The oidc-provider adapter for one model, backed by a Store collection (in memory, or one JSON
 * file per model when the store has a data directory).
 */
class ModelAdapter implements Adapter {
  constructor(
    private readonly records: Collection<StoredRecord>,
    // oidc-provider verifies expiry itself with its clock tolerance; keeping records a little
    // longer than their TTL lets it report "expired" rather than "not found".
    private readonly graceMs: number,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    this.purgeExpired();
    const expiresAt = expiresIn === undefined ? null : Date.now() + expiresIn * 1000 + this.graceMs;
    this.records.entries.set(id, { payload, expiresAt });
    await this.records.save();
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    const record = this.records.entries.get(id);
    if (!record || isExpired(record)) return Promise.resolve(undefined);
    return Promise.resolve(record.payload);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return Promise.resolve(this.findWhere('uid', uid));
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return Promise.resolve(this.findWhere('userCode', userCode));
  }

  async consume(id: string): Promise<void> {
    const record = this.records.entries.get(id);
    if (!record) return;
    record.payload = { ...record.payload, consumed: Math.floor(Date.now() / 1000) };
    await this.records.save();
  }

  async destroy(id: string): Promise<void> {
    if (this.records.entries.delete(id)) await this.records.save();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    let changed = false;
    for (const [id, record] of this.records.entries) {
      if (record.payload['grantId'] !== grantId) continue;
      this.records.entries.delete(id);
      changed = true;
    }
    if (changed) await this.records.save();
  }

  /** Ids of live records whose payload has `key === value`. */
  idsWhere(key: string, value: string): string[] {
    return [...this.records.entries]
      .filter(([, record]) => !isExpired(record) && record.payload[key] === value)
      .map(([id]) => id);
  }

  private findWhere(key: string, value: string): AdapterPayload | undefined {
    const [id] = this.idsWhere(key, value);
    return id === undefined ? undefined : this.records.entries.get(id)?.payload;
  }

  private purgeExpired(): void {
    for (const [id, record] of this.records.entries) {
      if (isExpired(record)) this.records.entries.delete(id);
    }
  }
}

function isExpired(record: StoredRecord): boolean {
  return record.expiresAt !== null && record.expiresAt <= Date.now();
}

/** All oidc-provider state of one demo app: the adapter factory plus admin operations. */
export class OidcStore {
  readonly #adapters = new Map<string, ModelAdapter>();

  constructor(
    private readonly store: Store,
    private readonly graceSeconds: number,
  ) {}

  /** The `adapter` option of the provider configuration. */
  readonly adapterFor = (model: string): ModelAdapter => {
    let adapter = this.#adapters.get(model);
    if (!adapter) {
      const records = this.store.collection(`oidc-${model}`, parseRecord);
      adapter = new ModelAdapter(records, this.graceSeconds * 1000);
      this.#adapters.set(model, adapter);
    }
    return adapter;
  };

  /** Deletes every grant of the account together with its codes and tokens; returns the count. */
  async revokeGrantsOf(accountId: string): Promise<number> {
    const grants = this.adapterFor('Grant');
    const grantIds = grants.idsWhere('accountId', accountId);
    for (const grantId of grantIds) {
      await Promise.all(GRANT_BOUND_MODELS.map((m) => this.adapterFor(m).revokeByGrantId(grantId)));
      await grants.destroy(grantId);
    }
    return grantIds.length;
  }
}
