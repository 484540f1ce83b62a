import type { Db } from '../../infra/database/client.js';
import type { CheckpointBody } from '../audit/checkpoint.js';

/** One row of audit_checkpoints (migrations 022, 025). */
export interface AuditCheckpoint extends CheckpointBody {
  eventIds: string[];
  eventHashes: Buffer[];
  hash: Buffer;
  signature: Buffer;
  /** The repair that took it off the chain, and when; null while it is on the chain. */
  supersededBy: string | null;
  supersededAt: Date | null;
}

/** A checkpoint about to be sealed: it always joins the chain. */
export type NewCheckpoint = Omit<AuditCheckpoint, 'supersededBy' | 'supersededAt'>;

/** What a chain link is checked by, without the (large) lists of events. */
export type CheckpointLink = Pick<
  AuditCheckpoint,
  'id' | 'afterSeq' | 'lastSeq' | 'previousHash' | 'hash' | 'supersededBy'
>;

/** A checkpoint without its event lists: enough to check its own hash and signature. */
export type CheckpointSeal = CheckpointBody &
  Pick<AuditCheckpoint, 'hash' | 'signature' | 'supersededBy' | 'supersededAt'>;

/*
 * Every seq here comes uncast: postgres.js hands a bigint over as its decimal string already,
 * whereas `last_seq::text as last_seq` would make `order by last_seq` sort that text alias, in
 * which '78' comes after '520' (the seal once chained to the wrong checkpoint so).
 */
const sealColumns = (sql: Db) => sql`
  id, environment_id, after_seq, last_seq, event_count, merkle_root, previous_hash, hash, key_id,
  signature, sealed_at, superseded_by, superseded_at`;

const columns = (sql: Db) => sql`${sealColumns(sql)}, event_ids, event_hashes`;

const linkColumns = (sql: Db) => sql`id, after_seq, last_seq, previous_hash, hash, superseded_by`;

/** The checkpoints on the chain, the ones `verify` links one to the next. */
const onChain = (sql: Db) => sql`superseded_at is null`;

/** As stored: the hashes in one bytea, 32 bytes each. */
type CheckpointRow = Omit<AuditCheckpoint, 'eventHashes'> & { eventHashes: Buffer };

/** 32-byte hashes stored back to back in one bytea. */
export function splitHashes(joined: Buffer): Buffer[] {
  const hashes: Buffer[] = [];
  for (let at = 0; at < joined.length; at += 32) hashes.push(joined.subarray(at, at + 32));
  return hashes;
}

export function fromRow(row: CheckpointRow): AuditCheckpoint {
  return { ...row, eventHashes: splitHashes(row.eventHashes) };
}

/**
 * Holds the environment's seal lock until the transaction ends: a seal and a repair of one
 * environment never run at once, so two checkpoints never chain to the same predecessor.
 */
export async function lockEnvironmentSeal(sql: Db, environmentId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('gatehouse.audit.seal'), hashtext(${environmentId}))`;
}

/** The newest checkpoint on the environment's chain: the one a new seal follows. */
export async function lastCheckpoint(
  sql: Db,
  environmentId: string,
): Promise<CheckpointLink | null> {
  const [row]: [CheckpointLink?] = await sql`
    select ${linkColumns(sql)} from audit_checkpoints
    where environment_id = ${environmentId} and ${onChain(sql)}
    order by last_seq desc limit 1`;
  return row ?? null;
}

/** The newest checkpoint on the chain as people are shown it: where it ends and when it was made. */
export async function newestCheckpointSeal(
  sql: Db,
  environmentId: string,
): Promise<Pick<AuditCheckpoint, 'id' | 'lastSeq' | 'eventCount' | 'sealedAt'> | null> {
  const [row]: [Pick<AuditCheckpoint, 'id' | 'lastSeq' | 'eventCount' | 'sealedAt'>?] = await sql`
    select id, last_seq, event_count, sealed_at from audit_checkpoints
    where environment_id = ${environmentId} and ${onChain(sql)}
    order by last_seq desc limit 1`;
  return row ?? null;
}

/** The newest checkpoint on the chain sealed before `before`: where `verify --since` starts. */
export async function lastCheckpointSealedBefore(
  sql: Db,
  environmentId: string,
  before: Date,
): Promise<CheckpointLink | null> {
  const [row]: [CheckpointLink?] = await sql`
    select ${linkColumns(sql)} from audit_checkpoints
    where environment_id = ${environmentId} and ${onChain(sql)} and sealed_at < ${before}
    order by last_seq desc limit 1`;
  return row ?? null;
}

/** The chain, oldest first, after the checkpoint ending at `afterSeq` when given. */
export async function checkpointsOf(
  sql: Db,
  environmentId: string,
  afterSeq: string | null,
): Promise<AuditCheckpoint[]> {
  const rows = await sql<CheckpointRow[]>`
    select ${columns(sql)} from audit_checkpoints
    where environment_id = ${environmentId} and ${onChain(sql)}
      ${afterSeq === null ? sql`` : sql`and last_seq > ${afterSeq}`}
    order by last_seq`;
  return rows.map(fromRow);
}

/** The links of an environment's checkpoints, on the chain or (`all`) also superseded ones. */
export async function checkpointLinks(
  sql: Db,
  environmentId: string,
  which: 'chain' | 'all',
): Promise<CheckpointLink[]> {
  return sql<CheckpointLink[]>`
    select ${linkColumns(sql)} from audit_checkpoints
    where environment_id = ${environmentId} ${which === 'chain' ? sql`and ${onChain(sql)}` : sql``}
    order by last_seq, id`;
}

export async function findCheckpoint(sql: Db, id: string): Promise<AuditCheckpoint | null> {
  const [row]: [CheckpointRow?] = await sql`
    select ${columns(sql)} from audit_checkpoints where id = ${id}`;
  return row ? fromRow(row) : null;
}

/** The environment's checkpoints a repair took off the chain, oldest seal first. */
export async function supersededCheckpoints(
  sql: Db,
  environmentId: string,
): Promise<CheckpointSeal[]> {
  return sql<CheckpointSeal[]>`
    select ${sealColumns(sql)} from audit_checkpoints
    where environment_id = ${environmentId} and superseded_at is not null
    order by id`;
}

export async function insertCheckpoint(sql: Db, checkpoint: NewCheckpoint): Promise<void> {
  await sql`
    insert into audit_checkpoints (id, environment_id, after_seq, last_seq, event_count, event_ids,
      event_hashes, merkle_root, previous_hash, hash, key_id, signature, sealed_at)
    values (${checkpoint.id}, ${checkpoint.environmentId}, ${checkpoint.afterSeq},
      ${checkpoint.lastSeq}, ${checkpoint.eventCount}, ${checkpoint.eventIds}::uuid[],
      ${Buffer.concat(checkpoint.eventHashes)}, ${checkpoint.merkleRoot}, ${checkpoint.previousHash},
      ${checkpoint.hash}, ${checkpoint.keyId}, ${checkpoint.signature}, ${checkpoint.sealedAt})`;
}

/**
 * Takes checkpoints off the chain, kept, naming the repair that did. Only ones still on it: the
 * count says whether another writer got there first.
 */
export async function supersedeCheckpoints(
  sql: Db,
  ids: string[],
  repair: { id: string; at: Date },
): Promise<number> {
  const rows = await sql`
    update audit_checkpoints set superseded_by = ${repair.id}, superseded_at = ${repair.at}
    where id = any(${ids}::uuid[]) and superseded_at is null`;
  return rows.count;
}

/**
 * Where a page of the listing ends: the last checkpoint's last_seq, and its id when it is a
 * superseded one (several may share a last_seq with each other and with the chain's).
 */
export interface CheckpointPosition {
  lastSeq: string;
  id?: string;
}

/**
 * Every checkpoint, superseded ones too, in seq order: by last_seq, a superseded one before the
 * chain's one with the same last_seq (it was sealed first), then by id.
 */
export async function listCheckpoints(
  sql: Db,
  environmentId: string,
  filter: { after?: CheckpointPosition; limit: number },
): Promise<AuditCheckpoint[]> {
  const { after } = filter;
  const rows = await sql<CheckpointRow[]>`
    select ${columns(sql)} from audit_checkpoints where environment_id = ${environmentId}
      ${
        after === undefined
          ? sql``
          : after.id === undefined
            ? sql`and last_seq > ${after.lastSeq}`
            : sql`and (last_seq, superseded_at is null, id) > (${after.lastSeq}, false, ${after.id})`
      }
    order by last_seq, superseded_at is null, id limit ${filter.limit + 1}`;
  return rows.map(fromRow);
}

/** The position to resume the listing after `checkpoint`. */
export function positionAfter(checkpoint: AuditCheckpoint): CheckpointPosition {
  // The chain's checkpoint comes last among those with its last_seq: last_seq alone resumes.
  return checkpoint.supersededAt === null
    ? { lastSeq: checkpoint.lastSeq }
    : { lastSeq: checkpoint.lastSeq, id: checkpoint.id };
}

/**
 * The highest seq a seal may reach: the end of the longest run of rows after `afterSeq` that are
 * all older than the settle delay (a younger row may still be written over by a later run of its
 * call). null when there is nothing to seal.
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
        where environment_id = ${environmentId} and seq > ${afterSeq})) as up_to`;
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
