import { ApplicationFailure } from '@temporalio/common';
import { v7 as uuidv7 } from 'uuid';
import type { AuditSigningKey } from '../../infra/audit-signing-key.js';
import type { Sql } from '../../infra/database/client.js';
import {
  eventLeaves,
  insertCheckpoint,
  lastCheckpoint,
  registerSigningKey,
  sealableUpTo,
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

/**
 * Seals one environment's settled events into a checkpoint chained to its last one. Under a
 * transaction-scoped advisory lock per environment, so two seals (an overlapping schedule run, a
 * manual one) never chain two checkpoints to the same predecessor.
 */
export async function sealEnvironment(
  deps: SealDeps & { signingKey: AuditSigningKey },
  environmentId: string,
): Promise<SealResult['checkpoints'][number] | null> {
  return deps.sql.begin(async (sql) => {
    await sql`select pg_advisory_xact_lock(hashtext('gatehouse.audit.seal'), hashtext(${environmentId}))`;
    const previous = await lastCheckpoint(sql, environmentId);
    const afterSeq = previous?.lastSeq ?? '0';
    const lastSeq = await sealableUpTo(sql, environmentId, afterSeq, deps.settleSeconds);
    if (lastSeq === null) return null;
    const leaves = await eventLeaves(sql, environmentId, afterSeq, lastSeq);
    if (leaves.length === 0) return null;
    const [clock] = await sql<{ now: Date }[]>`select now()`;
    const body: CheckpointBody = {
      id: uuidv7(),
      environmentId,
      afterSeq,
      lastSeq,
      eventCount: leaves.length,
      merkleRoot: merkleRoot(leaves),
      previousHash: previous?.hash ?? null,
      keyId: deps.signingKey.id,
      sealedAt: clock?.now ?? new Date(),
    };
    await insertCheckpoint(sql, {
      ...body,
      eventIds: leaves.map((leaf) => leaf.id),
      eventHashes: leaves.map((leaf) => leaf.hash),
      hash: checkpointHash(body),
      signature: signCheckpoint(body, deps.signingKey.privateKey),
    });
    return { environmentId, id: body.id, eventCount: body.eventCount, lastSeq };
  });
}

/** The `sealAudit` activity: every environment's settled events, each in its own checkpoint. */
export function sealAuditActivity(deps: SealDeps) {
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
    for (const { id } of environments) {
      const sealed = await sealEnvironment({ ...deps, signingKey }, id);
      if (sealed) checkpoints.push(sealed);
    }
    return { checkpoints };
  };
}
