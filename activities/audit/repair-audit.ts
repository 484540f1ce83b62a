import type { KeyObject } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { AuditSigningKey } from '../../infra/audit-signing-key.js';
import type { Db, Sql } from '../../infra/database/client.js';
import {
  checkpointLinks,
  findCheckpoint,
  insertCheckpoint,
  lockEnvironmentSeal,
  registerSigningKey,
  supersedeCheckpoints,
  type CheckpointLink,
} from '../db/audit-checkpoints.js';
import { insertRepair } from '../db/audit-repairs.js';
import { repairHash, signRepair, type RepairBody } from './repair-record.js';
import { checkpointOver } from './seal-audit.js';
import { chainsTo, checkCheckpoint, checkSealedEvents } from './verify-audit.js';

/** Where an environment's chain breaks, and what a repair takes off it. */
export interface ChainBreak {
  /** The first checkpoint, in seq order, that does not follow the one before it. */
  first: CheckpointLink;
  /** The last checkpoint that chains from the start of the trail; null when none does. */
  after: CheckpointLink | null;
  /** `first` and every checkpoint after it: each is chained to something off the chain. */
  offChain: CheckpointLink[];
}

/** One resealed checkpoint, as reported. */
export interface Resealed {
  id: string;
  afterSeq: string;
  lastSeq: string;
  eventCount: number;
}

/** What a repair of one environment found and did. */
export interface RepairOutcome {
  environmentId: string;
  /** null: the chain holds, there is nothing to repair. */
  chainBreak: ChainBreak | null;
  /** Why the trail was left as it is: it is not only forked. Empty when it could be repaired. */
  problems: string[];
  /** The checkpoints that replace the ones off the chain (on a dry run: would). */
  resealed: Resealed[];
  /** The repair record's id; null on a dry run, or when nothing was done. */
  repairId: string | null;
}

export interface RepairOptions {
  signingKey: AuditSigningKey;
  /** Trusted public keys by id: the checkpoints taken off the chain must verify under one. */
  keys: Map<string, KeyObject>;
  /** Find and check, change nothing. */
  dryRun: boolean;
  maxProblems?: number;
}

/**
 * Repairs one environment's chain as the seal's text ordering broke it (README "Audit integrity"):
 * from the first checkpoint, in seq order, that does not follow the one before it, every
 * checkpoint is taken off the chain (kept, marked superseded by a signed repair record) and their
 * ranges are sealed anew with the same boundaries, chained to the last good checkpoint.
 *
 * Only a fork is repaired: each checkpoint taken off must chain to a checkpoint that exists, its
 * hash, signature and Merkle root must verify, and every event it sealed must still be there as
 * sealed, with nothing inserted. Anything else is tampering (or damage) that resealing would
 * hide, so the environment is then left untouched and the problems are returned. Runs under the
 * environment's seal lock, in one transaction: the schedule's seal waits for it.
 */
export async function repairEnvironment(
  sql: Sql,
  environmentId: string,
  options: RepairOptions,
): Promise<RepairOutcome> {
  if (!options.dryRun) await registerSigningKey(sql, options.signingKey);
  return sql.begin(async (tx) => {
    await lockEnvironmentSeal(tx, environmentId);
    const outcome: RepairOutcome = {
      environmentId,
      chainBreak: findBreak(await checkpointLinks(tx, environmentId, 'chain')),
      problems: [],
      resealed: [],
      repairId: null,
    };
    const found = outcome.chainBreak;
    if (found === null) return outcome;
    const max = options.maxProblems ?? 20;
    const problem = (text: string) => {
      if (outcome.problems.length < max) outcome.problems.push(text);
    };
    await checkOffChain(tx, environmentId, found, options.keys, problem);
    if (outcome.problems.length > 0) return outcome;

    const [clock] = await tx<{ now: Date }[]>`select now()`;
    const repairedAt = clock?.now ?? new Date();
    const boundaries = [...new Set(found.offChain.map((link) => link.lastSeq))].sort((a, b) =>
      BigInt(a) < BigInt(b) ? -1 : 1,
    );
    const resealed = [];
    let previous: { lastSeq: string; hash: Buffer } | null = found.after;
    for (const lastSeq of boundaries) {
      const checkpoint = await checkpointOver(
        tx,
        options.signingKey,
        environmentId,
        previous,
        lastSeq,
        repairedAt,
      );
      if (checkpoint === null) continue;
      resealed.push(checkpoint);
      previous = checkpoint;
    }
    outcome.resealed = resealed.map(({ id, afterSeq, lastSeq, eventCount }) => ({
      id,
      afterSeq,
      lastSeq,
      eventCount,
    }));
    if (options.dryRun) return outcome;

    const body: RepairBody = {
      id: uuidv7(),
      environmentId,
      afterCheckpointId: found.after?.id ?? null,
      afterSeq: found.after?.lastSeq ?? '0',
      superseded: found.offChain.map(({ id, hash }) => ({ id, hash })),
      resealedIds: resealed.map((checkpoint) => checkpoint.id),
      keyId: options.signingKey.id,
      repairedAt,
    };
    await insertRepair(tx, {
      ...body,
      hash: repairHash(body),
      signature: signRepair(body, options.signingKey.privateKey),
    });
    const marked = await supersedeCheckpoints(
      tx,
      found.offChain.map((link) => link.id),
      { id: body.id, at: repairedAt },
    );
    if (marked !== found.offChain.length) {
      throw new Error(
        'the checkpoints changed while being repaired: nothing was changed, run it again',
      );
    }
    // After the marks, the last good checkpoint is the chain's newest: these follow it.
    for (const checkpoint of resealed) await insertCheckpoint(tx, checkpoint);
    outcome.repairId = body.id;
    return outcome;
  });
}

/** The chain, in seq order, against its links: where the first one fails to follow. */
export function findBreak(chain: CheckpointLink[]): ChainBreak | null {
  let after: CheckpointLink | null = null;
  for (const [index, checkpoint] of chain.entries()) {
    if (!chainsTo(checkpoint, after)) {
      return { first: checkpoint, after, offChain: chain.slice(index) };
    }
    after = checkpoint;
  }
  return null;
}

/** Whether the checkpoints off the chain are a fork and only that (see repairEnvironment). */
async function checkOffChain(
  sql: Db,
  environmentId: string,
  found: ChainBreak,
  keys: Map<string, KeyObject>,
  problem: (text: string) => void,
): Promise<void> {
  const all = await checkpointLinks(sql, environmentId, 'all');
  const sealed = new Set(all.map((link) => `${link.lastSeq}:${link.hash.toString('hex')}`));
  for (const link of found.offChain) {
    const chained =
      chainsTo(link, null) ||
      (link.previousHash !== null &&
        sealed.has(`${link.afterSeq}:${link.previousHash.toString('hex')}`));
    if (!chained) {
      problem(
        `checkpoint ${link.id}: chains to no checkpoint of the trail (after seq ${link.afterSeq}): one was deleted or edited`,
      );
    }
  }
  // Together the ranges off the chain must seal every seq from the last good checkpoint on.
  let covered = BigInt(found.after?.lastSeq ?? '0');
  const byStart = [...found.offChain].sort((a, b) =>
    BigInt(a.afterSeq) < BigInt(b.afterSeq) ? -1 : 1,
  );
  for (const link of byStart) {
    if (BigInt(link.afterSeq) > covered) {
      problem(
        `seq ${String(covered)} to ${link.afterSeq}: sealed by no checkpoint off the chain (one was deleted)`,
      );
    }
    if (BigInt(link.lastSeq) > covered) covered = BigInt(link.lastSeq);
  }
  for (const link of found.offChain) {
    const checkpoint = await findCheckpoint(sql, link.id);
    if (!checkpoint) continue;
    checkCheckpoint(checkpoint, keys, problem);
    await checkSealedEvents(sql, checkpoint, problem);
  }
}
