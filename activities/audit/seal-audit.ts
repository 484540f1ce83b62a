import { ApplicationFailure } from '@temporalio/common';
import { v7 as uuidv7 } from 'uuid';
import type { AuditSigningKey } from '../../infra/audit-signing-key.js';
import type { Db, Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import {
  eventLeaves,
  insertCheckpoint,
  lastCheckpoint,
  lockEnvironmentSeal,
  registerSigningKey,
  sealableUpTo,
  type NewCheckpoint,
} from '../db/audit-checkpoints.js';
import { checkpointHash, signCheckpoint, type CheckpointBody } from './checkpoint.js';
import { merkleRoot } from './merkle.js';

export interface SealDeps {
  sql: Sql;
  signingKey: AuditSigningKey | null;
  settleSeconds: number;
}

/** What one seal did, per environment that had settled events: its new checkpoint. */
export interface SealResult {
  checkpoints: { environmentId: string; id: string; eventCount: number; lastSeq: string }[];
}

/** A seal run in which some environments failed: what the others sealed, and why those failed. */
export interface SealFailureDetails extends SealResult {
  failures: { environmentId: string; error: string }[];
}

/**
 * A checkpoint over the environment's events with seq in (previous.lastSeq, lastSeq], chained
 * to `previous` (null: the start of the trail), hashed and signed; null when the range holds
 * none of its events. Not stored: the seal and the repair store it.
 */
export async function checkpointOver(
  sql: Db,
  signingKey: AuditSigningKey,
  environmentId: string,
  previous: { lastSeq: string; hash: Buffer } | null,
  lastSeq: string,
  sealedAt: Date,
): Promise<NewCheckpoint | null> {
  const afterSeq = previous?.lastSeq ?? '0';
  const leaves = await eventLeaves(sql, environmentId, afterSeq, lastSeq);
  if (leaves.length === 0) return null;
  const body: CheckpointBody = {
    id: uuidv7(),
    environmentId,
    afterSeq,
    lastSeq,
    eventCount: leaves.length,
    merkleRoot: merkleRoot(leaves),
    previousHash: previous?.hash ?? null,
    keyId: signingKey.id,
    sealedAt,
  };
  return {
    ...body,
    eventIds: leaves.map((leaf) => leaf.id),
    eventHashes: leaves.map((leaf) => leaf.hash),
    hash: checkpointHash(body),
    signature: signCheckpoint(body, signingKey.privateKey),
  };
}

/**
 * Seals one environment's settled events into a checkpoint chained to its last one. Under the
 * environment's seal lock, so two seals (an overlapping schedule run, a manual one, a repair)
 * never chain two checkpoints to the same predecessor.
 */
export async function sealEnvironment(
  deps: Omit<SealDeps, 'signingKey'> & { signingKey: AuditSigningKey },
  environmentId: string,
): Promise<SealResult['checkpoints'][number] | null> {
  return deps.sql.begin(async (sql) => {
    await lockEnvironmentSeal(sql, environmentId);
    const previous = await lastCheckpoint(sql, environmentId);
    const lastSeq = await sealableUpTo(
      sql,
      environmentId,
      previous?.lastSeq ?? '0',
      deps.settleSeconds,
    );
    if (lastSeq === null) return null;
    const [clock] = await sql<{ now: Date }[]>`select now()`;
    const checkpoint = await checkpointOver(
      sql,
      deps.signingKey,
      environmentId,
      previous,
      lastSeq,
      clock?.now ?? new Date(),
    );
    if (checkpoint === null) return null;
    await insertCheckpoint(sql, checkpoint);
    return { environmentId, id: checkpoint.id, eventCount: checkpoint.eventCount, lastSeq };
  });
}

/**
 * The `sealAudit` activity: every environment's settled events, each in its own checkpoint.
 * Each environment is sealed on its own: one that fails (a lock or statement timeout, a chain
 * the database refuses) is logged and the others are still sealed. The activity then fails,
 * naming the environments that did not seal, so the schedule's run shows the failure (and
 * Temporal retries it; a retry only seals what is new) rather than reporting success.
 */
export function sealAuditActivity(deps: SealDeps & { logger: Logger }) {
  return async function sealAudit(): Promise<SealResult> {
    const { signingKey } = deps;
    if (signingKey === null) {
      throw ApplicationFailure.nonRetryable(
        'AUDIT_SIGNING_KEY is not set on the worker: audit events are not sealed',
        'AuditSigningKeyMissing',
      );
    }
    await registerSigningKey(deps.sql, signingKey);
    const environments = await deps.sql<{ id: string }[]>`select id from environments order by id`;
    const checkpoints: SealResult['checkpoints'] = [];
    const failures: SealFailureDetails['failures'] = [];
    for (const { id } of environments) {
      try {
        const sealed = await sealEnvironment({ ...deps, signingKey }, id);
        if (sealed) checkpoints.push(sealed);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        deps.logger.error(
          { environmentId: id, error: message },
          'audit seal of an environment failed; the other environments are still sealed',
        );
        failures.push({ environmentId: id, error: message });
      }
    }
    if (failures.length > 0) {
      const details: SealFailureDetails = { checkpoints, failures };
      throw ApplicationFailure.create({
        type: 'AuditSealFailed',
        message: `audit seal failed for ${String(failures.length)} of ${String(environments.length)} environments (the others were sealed): ${failures.map((f) => `${f.environmentId}: ${f.error}`).join('; ')}`,
        details: [details],
      });
    }
    return { checkpoints };
  };
}
