import type { Db } from '../../infra/database/client.js';
import type { CheckpointBody } from '../audit/checkpoint.js';

/** One row of audit_checkpoints (migration 022). */
export interface AuditCheckpoint extends CheckpointBody {
  eventIds: string[];
  eventHashes: Buffer[];
  hash: Buffer;
  signature: Buffer;
}

const columns = (sql: Db) => sql`
  id, environment_id, after_seq::text as after_seq, last_seq::text as last_seq, event_count,
  event_ids, event_hashes, merkle_root, previous_hash, hash, key_id, signature, sealed_at`;

/** As stored: the hashes in one bytea, 32 bytes each. */
type CheckpointRow = Omit<AuditCheckpoint, 'eventHashes'> & { eventHashes: Buffer };

export function fromRow(row: CheckpointRow): AuditCheckpoint {
  const eventHashes: Buffer[] = [];
  for (let at = 0; at < row.eventHashes.length; at += 32) {
    eventHashes.push(row.eventHashes.subarray(at, at + 32));
  }
  return { ...row, eventHashes };
}

export async function lastCheckpoint(
  sql: Db,
  environmentId: string,
): Promise<AuditCheckpoint | null> {
  const [row]: [CheckpointRow?] = await sql`
    select ${columns(sql)} from audit_checkpoints where environment_id = ${environmentId}
    order by last_seq desc limit 1`;
  return row ? fromRow(row) : null;
}

/** Oldest first, after the checkpoint ending at `afterSeq` when given. */
export async function checkpointsOf(
  sql: Db,
  environmentId: string,
  afterSeq: string | null,
): Promise<AuditCheckpoint[]> {
  const rows = await sql<CheckpointRow[]>`
    select ${columns(sql)} from audit_checkpoints where environment_id = ${environmentId}
      ${afterSeq === null ? sql`` : sql`and last_seq > ${afterSeq}`}
    order by last_seq`;
  return rows.map(fromRow);
}

export async function insertCheckpoint(sql: Db, checkpoint: AuditCheckpoint): Promise<void> {
  await sql`
    insert into audit_checkpoints (id, environment_id, after_seq, last_seq, event_count, event_ids,
      event_hashes, merkle_root, previous_hash, hash, key_id, signature, sealed_at)
    values (${checkpoint.id}, ${checkpoint.environmentId}, ${checkpoint.afterSeq},
      ${checkpoint.lastSeq}, ${checkpoint.eventCount}, ${checkpoint.eventIds}::uuid[],
      ${Buffer.concat(checkpoint.eventHashes)}, ${checkpoint.merkleRoot}, ${checkpoint.previousHash},
      ${checkpoint.hash}, ${checkpoint.keyId}, ${checkpoint.signature}, ${checkpoint.sealedAt})`;
}

/** Oldest first; `after`: the last_seq of the previous page's last checkpoint. */
export async function listCheckpoints(
  sql: Db,
  environmentId: string,
  filter: { after?: string; limit: number },
): Promise<AuditCheckpoint[]> {
  const rows = await sql<CheckpointRow[]>`
    select ${columns(sql)} from audit_checkpoints where environment_id = ${environmentId}
      ${filter.after === undefined ? sql`` : sql`and last_seq > ${filter.after}`}
    order by last_seq limit ${filter.limit + 1}`;
  return rows.map(fromRow);
}

/**
 * The highest seq a seal may reach: the end of the longest run of rows after `afterSeq` that are
 * all older than the settle delay (a younger row may still be written over by its call, issue
 * 19.4). null when there is nothing to seal.
 */
export async function sealableUpTo(
  sql: Db,
  environmentId: string,
  afterSeq: string,
  settleSeconds: number,
): Promise<string | null> {
  const [row] = await sql<{ upTo: string | null }[]>`
    select coalesce(
      (select min(seq) - 1 from audit_events
        where environment_id = ${environmentId} and seq > ${afterSeq}
          and time >= now() - make_interval(secs => ${settleSeconds})),
      (select max(seq) from audit_events
        where environment_id = ${environmentId} and seq > ${afterSeq}))::text as up_to`;
  const upTo = row?.upTo ?? null;
  return upTo === null || BigInt(upTo) <= BigInt(afterSeq) ? null : upTo;
}

/** The ids and hashes of an environment's rows with seq in (afterSeq, lastSeq], in seq order. */
export async function eventLeaves(
  sql: Db,
  environmentId: string,
  afterSeq: string,
  lastSeq: string,
): Promise<{ id: string; hash: Buffer }[]> {
  return sql<{ id: string; hash: Buffer }[]>`
    select id, hash from audit_events
    where environment_id = ${environmentId} and seq > ${afterSeq} and seq <= ${lastSeq}
    order by seq`;
}

/**
 * Records the key's public half under its id. A different key already under that id is refused:
 * a rotation must take a new id, or older checkpoints would no longer verify.
 */
export async function registerSigningKey(
  sql: Db,
  key: { id: string; publicKeyPem: string },
): Promise<void> {
  await sql`
    insert into audit_signing_keys (id, public_key) values (${key.id}, ${key.publicKeyPem})
    on conflict (id) do nothing`;
  const [row]: [{ publicKey: string }?] = await sql`
    select public_key from audit_signing_keys where id = ${key.id}`;
  if (row?.publicKey.trim() !== key.publicKeyPem.trim()) {
    throw new Error(
      `audit signing key id "${key.id}" is already registered with another public key: give the new key a new AUDIT_SIGNING_KEY_ID`,
    );
  }
}

export async function signingPublicKeys(sql: Db): Promise<Map<string, string>> {
  const rows = await sql<{ id: string; publicKey: string }[]>`
    select id, public_key from audit_signing_keys`;
  return new Map(rows.map((row) => [row.id, row.publicKey]));
}
