import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Sql } from '../../infra/database/client.js';
import type { AuditCheckpoint } from '../db/audit-checkpoints.js';
import { checkpointsOf, signingPublicKeys } from '../db/audit-checkpoints.js';
import { eventHash, hashedEventColumns, type HashedEventRow } from './canonical-event.js';
import { checkpointHash, checkpointSignatureValid } from './checkpoint.js';
import { merkleRoot } from './merkle.js';

export interface VerifyOptions {
  /** One environment's id; all when absent. */
  environmentId?: string;
  /** Only checkpoints sealed at or after this time (and the events they seal, and unsealed ones). */
  since?: Date;
  /** Trusted public keys by key id; when absent, the audit_signing_keys table is trusted. */
  publicKeys?: Map<string, string>;
  /** Stop after this many problems. */
  maxProblems?: number;
}

export interface VerifyReport {
  checkpoints: number;
  events: number;
  /** In the order found: per environment, checkpoints in seq order, then unsealed events. */
  problems: string[];
}

const BATCH = 2000;

/**
 * Recomputes the audit trail from Postgres (README "Audit integrity"): every checkpoint's hash,
 * chain link, signature and Merkle root; every sealed row against the id and hash its checkpoint
 * lists; every row's hash against its content.
 */
export async function verifyAudit(sql: Sql, options: VerifyOptions = {}): Promise<VerifyReport> {
  const max = options.maxProblems ?? 20;
  const keys = await trustedKeys(sql, options.publicKeys);
  const report: VerifyReport = { checkpoints: 0, events: 0, problems: [] };
  const problem = (text: string) => {
    if (report.problems.length < max) report.problems.push(text);
  };
  const environments =
    options.environmentId === undefined
      ? (await sql<{ id: string }[]>`select id from environments order by id`).map((e) => e.id)
      : [options.environmentId];
  for (const environmentId of environments) {
    let previous = await checkpointBefore(sql, environmentId, options.since);
    const checkpoints = await checkpointsOf(sql, environmentId, previous?.lastSeq ?? null);
    for (const checkpoint of checkpoints) {
      report.checkpoints += 1;
      checkCheckpoint(checkpoint, previous, keys, problem);
      report.events += await checkSealedEvents(sql, checkpoint, problem);
      previous = checkpoint;
    }
    report.events += await checkUnsealedEvents(
      sql,
      environmentId,
      previous?.lastSeq ?? '0',
      problem,
    );
  }
  return report;
}

async function trustedKeys(
  sql: Sql,
  given: Map<string, string> | undefined,
): Promise<Map<string, KeyObject>> {
  const pems = given ?? (await signingPublicKeys(sql));
  return new Map([...pems].map(([id, pem]) => [id, createPublicKey(pem)]));
}

/** The last checkpoint sealed before `since`: the link the first checked one must chain to. */
async function checkpointBefore(
  sql: Sql,
  environmentId: string,
  since: Date | undefined,
): Promise<Pick<AuditCheckpoint, 'id' | 'hash' | 'lastSeq'> | null> {
  if (since === undefined) return null;
  const [row]: [Pick<AuditCheckpoint, 'id' | 'hash' | 'lastSeq'>?] = await sql`
    select id, hash, last_seq::text as last_seq from audit_checkpoints
    where environment_id = ${environmentId} and sealed_at < ${since}
    order by last_seq desc limit 1`;
  return row ?? null;
}

function checkCheckpoint(
  checkpoint: AuditCheckpoint,
  previous: Pick<AuditCheckpoint, 'id' | 'hash' | 'lastSeq'> | null,
  keys: Map<string, KeyObject>,
  problem: (text: string) => void,
): void {
  const name = `checkpoint ${checkpoint.id}`;
  if (!checkpointHash(checkpoint).equals(checkpoint.hash)) {
    problem(`${name}: its hash does not match its fields (a field was edited)`);
  }
  const expectedPrevious = previous?.hash ?? null;
  const chained =
    expectedPrevious === null
      ? checkpoint.previousHash === null && checkpoint.afterSeq === '0'
      : checkpoint.previousHash?.equals(expectedPrevious) === true &&
        checkpoint.afterSeq === previous?.lastSeq;
  if (!chained) {
    problem(
      `${name}: does not chain to ${previous ? `checkpoint ${previous.id}` : 'the start of the trail'} (a checkpoint was deleted, inserted or edited)`,
    );
  }
  const key = keys.get(checkpoint.keyId);
  if (!key) {
    problem(`${name}: signed with key "${checkpoint.keyId}", which is not a trusted key`);
  } else if (!checkpointSignatureValid(checkpoint, checkpoint.signature, key)) {
    problem(`${name}: its signature does not verify under key "${checkpoint.keyId}"`);
  }
  const listed = checkpoint.eventIds.map((id, i) => ({ id, hash: checkpoint.eventHashes[i] }));
  const listIntact =
    listed.length === checkpoint.eventCount &&
    listed.every((leaf): leaf is { id: string; hash: Buffer } => leaf.hash !== undefined) &&
    listed.length > 0 &&
    merkleRoot(listed).equals(checkpoint.merkleRoot);
  if (!listIntact) {
    problem(`${name}: its list of events does not match its signed Merkle root and count`);
  }
}

/** The rows in a checkpoint's range against the ids and hashes it lists; returns rows read. */
async function checkSealedEvents(
  sql: Sql,
  checkpoint: AuditCheckpoint,
  problem: (text: string) => void,
): Promise<number> {
  const sealed = new Map(checkpoint.eventIds.map((id, i) => [id, i]));
  const seen = new Set<string>();
  let position = 0;
  let read = 0;
  const cursor = sql<HashedEventRow[]>`
    select ${hashedEventColumns(sql)} from audit_events
    where environment_id = ${checkpoint.environmentId}
      and seq > ${checkpoint.afterSeq} and seq <= ${checkpoint.lastSeq}
    order by audit_events.seq`.cursor(BATCH);
  for await (const rows of cursor) {
    for (const row of rows) {
      read += 1;
      const index = sealed.get(row.id);
      if (index === undefined) {
        problem(
          `event ${row.id}: inserted into the range sealed by checkpoint ${checkpoint.id} (seq ${row.seq})`,
        );
        continue;
      }
      seen.add(row.id);
      checkRowHash(row, problem);
      const sealedHash = checkpoint.eventHashes[index];
      if (sealedHash && !sealedHash.equals(row.hash)) {
        problem(
          `event ${row.id}: its hash is not the one sealed in checkpoint ${checkpoint.id} (edited, hash and all)`,
        );
      }
      if (index !== position) {
        problem(`event ${row.id}: out of the order sealed in checkpoint ${checkpoint.id}`);
        position = index;
      }
      position += 1;
    }
  }
  for (const id of checkpoint.eventIds) {
    if (!seen.has(id)) problem(`event ${id}: missing (sealed in checkpoint ${checkpoint.id})`);
  }
  return read;
}

/** Rows not yet sealed: only their own hash can be checked (README: what is not detected). */
async function checkUnsealedEvents(
  sql: Sql,
  environmentId: string,
  afterSeq: string,
  problem: (text: string) => void,
): Promise<number> {
  let read = 0;
  const cursor = sql<HashedEventRow[]>`
    select ${hashedEventColumns(sql)} from audit_events
    where environment_id = ${environmentId} and seq > ${afterSeq}
    order by audit_events.seq`.cursor(BATCH);
  for await (const rows of cursor) {
    for (const row of rows) {
      read += 1;
      checkRowHash(row, problem);
    }
  }
  return read;
}

function checkRowHash(row: HashedEventRow, problem: (text: string) => void): void {
  if (!eventHash(row).equals(row.hash)) {
    problem(`event ${row.id}: its content does not match its hash (a field was edited)`);
  }
}
