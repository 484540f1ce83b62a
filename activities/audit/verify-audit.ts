import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Db, Sql } from '../../infra/database/client.js';
import {
  checkpointsOf,
  lastCheckpointSealedBefore,
  signingPublicKeys,
  supersededCheckpoints,
  type AuditCheckpoint,
  type CheckpointLink,
  type CheckpointSeal,
} from '../db/audit-checkpoints.js';
import { repairsOf } from '../db/audit-repairs.js';
import { eventHash, hashedEventColumns, type HashedEventRow } from './canonical-event.js';
import { checkpointHash, checkpointSignatureValid } from './checkpoint.js';
import { merkleRoot } from './merkle.js';
import { repairHash, repairSignatureValid } from './repair-record.js';

export interface VerifyOptions {
  /** One environment's id; all when absent. */
  environmentId?: string;
  /** Only checkpoints sealed at or after this time (and the events they seal, and unsealed ones). */
  since?: Date;
  /** Trusted public keys by key id; when absent, the audit_signing_keys table is trusted. */
  publicKeys?: Map<string, string>;
  /** Stop after this many problems. */
  maxProblems?: number;
  /**
   * Only the unsealed events written at or after this time; all when absent. The console's
   * check of the last day passes it with `since`, so that a trail left unsealed (no signing key)
   * does not make every look at the console re-hash the environment's whole history.
   */
  unsealedSince?: Date;
}

/** A repair as `verify` reports it: what it took off the chain and what it sealed instead. */
export interface RepairSummary {
  id: string;
  environmentId: string;
  repairedAt: Date;
  afterCheckpointId: string | null;
  afterSeq: string;
  superseded: number;
  resealed: number;
}

export interface VerifyReport {
  /** Checkpoints on the chain, checked link by link. */
  checkpoints: number;
  /** Checkpoints a signed repair took off the chain: kept, and checked against that repair. */
  superseded: number;
  repairs: RepairSummary[];
  events: number;
  /** In the order found: per environment, checkpoints in seq order, then unsealed events. */
  problems: string[];
}

export type Problem = (text: string) => void;

const BATCH = 2000;

/**
 * Recomputes the audit trail from Postgres (README "Audit integrity"): every checkpoint's hash,
 * chain link, signature and Merkle root; every sealed row against the id and hash its checkpoint
 * lists; every row's hash against its content; every superseded checkpoint against the signed
 * repair that took it off the chain.
 */
export async function verifyAudit(sql: Sql, options: VerifyOptions = {}): Promise<VerifyReport> {
  const max = options.maxProblems ?? 20;
  const keys = await trustedKeys(sql, options.publicKeys);
  const report: VerifyReport = {
    checkpoints: 0,
    superseded: 0,
    repairs: [],
    events: 0,
    problems: [],
  };
  const problem = (text: string) => {
    if (report.problems.length < max) report.problems.push(text);
  };
  const environments =
    options.environmentId === undefined
      ? (await sql<{ id: string }[]>`select id from environments order by id`).map((e) => e.id)
      : [options.environmentId];
  for (const environmentId of environments) {
    let previous: CheckpointLink | null =
      options.since === undefined
        ? null
        : await lastCheckpointSealedBefore(sql, environmentId, options.since);
    const checkpoints = await checkpointsOf(sql, environmentId, previous?.lastSeq ?? null);
    for (const checkpoint of checkpoints) {
      report.checkpoints += 1;
      checkChainLink(checkpoint, previous, problem);
      checkCheckpoint(checkpoint, keys, problem);
      report.events += await checkSealedEvents(sql, checkpoint, problem);
      previous = checkpoint;
    }
    report.events += await checkUnsealedEvents(
      sql,
      environmentId,
      previous?.lastSeq ?? '0',
      options.unsealedSince,
      problem,
    );
    await checkRepairs(sql, environmentId, keys, report, problem);
  }
  return report;
}

/** The keys given (`--public-keys`), or else the audit_signing_keys table. */
export async function trustedKeys(
  sql: Db,
  given: Map<string, string> | undefined,
): Promise<Map<string, KeyObject>> {
  const pems = given ?? (await signingPublicKeys(sql));
  return new Map([...pems].map(([id, pem]) => [id, createPublicKey(pem)]));
}

/** Whether `checkpoint` follows `previous` on the chain (null: starts the trail). */
export function chainsTo(
  checkpoint: Pick<CheckpointLink, 'afterSeq' | 'previousHash'>,
  previous: Pick<CheckpointLink, 'lastSeq' | 'hash'> | null,
): boolean {
  return previous === null
    ? checkpoint.previousHash === null && checkpoint.afterSeq === '0'
    : checkpoint.previousHash?.equals(previous.hash) === true &&
        checkpoint.afterSeq === previous.lastSeq;
}

function checkChainLink(
  checkpoint: AuditCheckpoint,
  previous: CheckpointLink | null,
  problem: Problem,
): void {
  if (!chainsTo(checkpoint, previous)) {
    problem(
      `checkpoint ${checkpoint.id}: does not chain to ${previous ? `checkpoint ${previous.id}` : 'the start of the trail'} (a checkpoint was deleted, inserted or edited)`,
    );
  }
}

/** A checkpoint's own hash and signature: what it was when sealed. */
function checkSeal(checkpoint: CheckpointSeal, keys: Map<string, KeyObject>, problem: Problem) {
  const name = `checkpoint ${checkpoint.id}`;
  if (!checkpointHash(checkpoint).equals(checkpoint.hash)) {
    problem(`${name}: its hash does not match its fields (a field was edited)`);
  }
  const key = keys.get(checkpoint.keyId);
  if (!key) {
    problem(`${name}: signed with key "${checkpoint.keyId}", which is not a trusted key`);
  } else if (!checkpointSignatureValid(checkpoint, checkpoint.signature, key)) {
    problem(`${name}: its signature does not verify under key "${checkpoint.keyId}"`);
  }
}

/** Everything about one checkpoint but its link to the one before and the rows it seals. */
export function checkCheckpoint(
  checkpoint: AuditCheckpoint,
  keys: Map<string, KeyObject>,
  problem: Problem,
): void {
  checkSeal(checkpoint, keys, problem);
  const listed = checkpoint.eventIds.map((id, i) => ({ id, hash: checkpoint.eventHashes[i] }));
  const listIntact =
    listed.length === checkpoint.eventCount &&
    listed.every((leaf): leaf is { id: string; hash: Buffer } => leaf.hash !== undefined) &&
    listed.length > 0 &&
    merkleRoot(listed).equals(checkpoint.merkleRoot);
  if (!listIntact) {
    problem(
      `checkpoint ${checkpoint.id}: its list of events does not match its signed Merkle root and count`,
    );
  }
}

/**
 * The checkpoints off the chain and the repairs that took them off it. A superseded mark counts
 * only when a repair signed by a trusted key names that checkpoint with its hash: otherwise
 * anyone able to write the table could take a checkpoint (and the events it seals) off the chain.
 * Each repair's checkpoints must still be there as it found them: none are ever deleted.
 */
async function checkRepairs(
  sql: Sql,
  environmentId: string,
  keys: Map<string, KeyObject>,
  report: VerifyReport,
  problem: Problem,
): Promise<void> {
  const superseded = await supersededCheckpoints(sql, environmentId);
  const repairs = await repairsOf(sql, environmentId);
  if (superseded.length === 0 && repairs.length === 0) return;
  const byId = new Map(superseded.map((checkpoint) => [checkpoint.id, checkpoint]));
  const namedBy = new Map<string, string>();
  for (const repair of repairs) {
    const name = `repair ${repair.id}`;
    const key = keys.get(repair.keyId);
    if (!repairHash(repair).equals(repair.hash)) {
      problem(`${name}: its hash does not match its fields (a field was edited)`);
      continue;
    }
    if (!key) {
      problem(`${name}: signed with key "${repair.keyId}", which is not a trusted key`);
      continue;
    }
    if (!repairSignatureValid(repair, repair.signature, key)) {
      problem(`${name}: its signature does not verify under key "${repair.keyId}"`);
      continue;
    }
    for (const { id, hash } of repair.superseded) {
      const checkpoint = byId.get(id);
      if (!checkpoint) {
        problem(
          `checkpoint ${id}: superseded by ${name}, but missing or back on the chain (deleted or edited)`,
        );
      } else if (checkpoint.supersededBy !== repair.id || !checkpoint.hash.equals(hash)) {
        problem(`checkpoint ${id}: not as ${name} superseded it (edited)`);
      } else {
        namedBy.set(id, repair.id);
      }
    }
    report.repairs.push({
      id: repair.id,
      environmentId,
      repairedAt: repair.repairedAt,
      afterCheckpointId: repair.afterCheckpointId,
      afterSeq: repair.afterSeq,
      superseded: repair.superseded.length,
      resealed: repair.resealedIds.length,
    });
  }
  for (const checkpoint of superseded) {
    report.superseded += 1;
    checkSeal(checkpoint, keys, problem);
    if (!namedBy.has(checkpoint.id)) {
      problem(
        `checkpoint ${checkpoint.id}: marked superseded, but no repair signed by a trusted key names it (taken off the chain by an edit)`,
      );
    }
  }
}

/** The rows in a checkpoint's range against the ids and hashes it lists; returns rows read. */
export async function checkSealedEvents(
  sql: Db,
  checkpoint: AuditCheckpoint,
  problem: Problem,
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
  since: Date | undefined,
  problem: Problem,
): Promise<number> {
  let read = 0;
  const cursor = sql<HashedEventRow[]>`
    select ${hashedEventColumns(sql)} from audit_events
    where environment_id = ${environmentId} and seq > ${afterSeq}
      ${since === undefined ? sql`` : sql`and audit_events.time >= ${since}`}
    order by audit_events.seq`.cursor(BATCH);
  for await (const rows of cursor) {
    for (const row of rows) {
      read += 1;
      checkRowHash(row, problem);
    }
  }
  return read;
}

function checkRowHash(row: HashedEventRow, problem: Problem): void {
  if (!eventHash(row).equals(row.hash)) {
    problem(`event ${row.id}: its content does not match its hash (a field was edited)`);
  }
}
