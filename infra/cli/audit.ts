import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { signingPublicKeys } from '../../activities/db/audit-checkpoints.js';
import { findEnvironmentByName, listEnvironments } from '../../activities/db/environments.js';
import { repairEnvironment, type RepairOutcome } from '../../activities/audit/repair-audit.js';
import {
  trustedKeys,
  verifyAudit,
  type VerifyReport,
} from '../../activities/audit/verify-audit.js';
import { loadAuditSigningKey } from '../config.js';
import type { Sql } from '../database/client.js';
import { loadOrCreateLocalState } from '../dev/local-state.js';

export interface VerifyAuditOptions {
  env?: string;
  since?: string;
  publicKeys?: string;
}

/** A --public-keys file: `{"<key id>": "<SPKI PEM>", …}`, as `gatehouse audit keys` prints. */
const publicKeysFile = z.record(z.string(), z.string().includes('BEGIN PUBLIC KEY'));

/** The environment --env names, or every one (undefined) without it. */
async function environmentNamed(sql: Sql, name: string | undefined): Promise<string | undefined> {
  if (name === undefined) return undefined;
  const environment = await findEnvironmentByName(sql, name);
  if (!environment) throw new Error(`no environment "${name}"`);
  return environment.id;
}

/** A --public-keys file, read; undefined without the option. */
async function publicKeysOption(
  file: string | undefined,
): Promise<Map<string, string> | undefined> {
  if (file === undefined) return undefined;
  return new Map(
    Object.entries(publicKeysFile.parse(JSON.parse(await readFile(file, 'utf8')) as unknown)),
  );
}

/** The repairs found, one line each: a repaired trail says so every time it is verified. */
function repairLines(report: VerifyReport, names: Map<string, string>): string[] {
  return report.repairs.map(
    (repair) =>
      `  repair ${repair.id} at ${repair.repairedAt.toISOString()}, environment ${names.get(repair.environmentId) ?? repair.environmentId}: ${String(repair.superseded)} checkpoints after ${repair.afterCheckpointId === null ? 'the start of the trail' : `checkpoint ${repair.afterCheckpointId}`} (seq ${repair.afterSeq}) superseded, resealed in ${String(repair.resealed)}`,
  );
}

/**
 * `gatehouse audit verify`: recomputes the trail; resolves with a summary when it is intact,
 * throws (exit 1) naming each problem found, the first first. Checkpoints a repair superseded
 * are counted apart, and each repair is listed.
 */
export async function verifyAuditCommand(sql: Sql, options: VerifyAuditOptions): Promise<string> {
  const since = options.since === undefined ? undefined : new Date(options.since);
  if (since && Number.isNaN(since.getTime()))
    throw new Error(`--since: not a time: ${options.since}`);
  const environmentId = await environmentNamed(sql, options.env);
  const publicKeys = await publicKeysOption(options.publicKeys);
  const report = await verifyAudit(sql, {
    ...(environmentId === undefined ? {} : { environmentId }),
    ...(since === undefined ? {} : { since }),
    ...(publicKeys === undefined ? {} : { publicKeys }),
  });
  const superseded =
    report.superseded === 0 && report.repairs.length === 0
      ? ''
      : `; ${String(report.superseded)} superseded checkpoints kept, by ${String(report.repairs.length)} ${report.repairs.length === 1 ? 'repair' : 'repairs'}`;
  const counted = `${String(report.checkpoints)} checkpoints, ${String(report.events)} events${superseded}`;
  const names = new Map((await listEnvironments(sql)).map((e) => [e.id, e.name]));
  const repairs = repairLines(report, names);
  if (report.problems.length === 0) {
    return [
      `audit trail intact: ${counted}${publicKeys ? '' : ' (keys trusted from the database; pass --public-keys for keys kept elsewhere)'}`,
      ...repairs,
    ].join('\n');
  }
  throw new Error(
    [
      `audit trail does not verify (${counted}):`,
      ...report.problems.map((p) => `  ${p}`),
      ...repairs,
    ].join('\n'),
  );
}

export interface RepairAuditOptions {
  env?: string;
  publicKeys?: string;
  dryRun?: boolean;
}

/** The key the worker seals with: AUDIT_SIGNING_KEY, or `gatehouse dev`'s without DATABASE_URL. */
async function repairSigningKey() {
  const local = process.env.DATABASE_URL ? null : await loadOrCreateLocalState();
  const key = loadAuditSigningKey({
    ...(local?.auditSigningKey ? { AUDIT_SIGNING_KEY: local.auditSigningKey } : {}),
    ...process.env,
  });
  if (key === null) {
    throw new Error(
      'AUDIT_SIGNING_KEY is not set: the repair signs its record and the checkpoints it reseals with the key the worker seals with (and AUDIT_SIGNING_KEY_ID)',
    );
  }
  return key;
}

function describeOutcome(outcome: RepairOutcome, name: string, dryRun: boolean): string[] {
  const found = outcome.chainBreak;
  if (found === null) return [`environment ${name}: chain intact, nothing to repair`];
  const lines = [
    `environment ${name}: checkpoint ${found.first.id} (after seq ${found.first.afterSeq}) does not follow ${found.after === null ? 'the start of the trail' : `checkpoint ${found.after.id} (seq ${found.after.lastSeq})`}`,
  ];
  if (outcome.problems.length > 0) return lines;
  const first = outcome.resealed[0];
  const last = outcome.resealed.at(-1);
  const range = first && last ? `seq ${first.afterSeq} to ${last.lastSeq}` : 'nothing';
  const events = outcome.resealed.reduce((sum, c) => sum + c.eventCount, 0);
  if (dryRun) {
    lines.push(
      `  would supersede ${String(found.offChain.length)} checkpoints (kept, marked) and reseal ${range} (${String(events)} events) in ${String(outcome.resealed.length)} checkpoints`,
    );
  } else {
    lines.push(
      `  superseded ${String(found.offChain.length)} checkpoints (kept, marked superseded by repair ${outcome.repairId ?? ''})`,
      `  ${range} (${String(events)} events) resealed in ${String(outcome.resealed.length)} checkpoints`,
    );
  }
  return lines;
}

/**
 * `gatehouse audit repair`: mends each environment's chain forked by the seal's old text ordering
 * (activities/audit/repair-audit.ts), each on its own. Resolves with what it did; throws (exit 1)
 * when an environment could not be repaired, naming why, after doing the others.
 */
export async function repairAuditCommand(sql: Sql, options: RepairAuditOptions): Promise<string> {
  const signingKey = await repairSigningKey();
  const only = await environmentNamed(sql, options.env);
  const keys = await trustedKeys(sql, await publicKeysOption(options.publicKeys));
  const dryRun = options.dryRun === true;
  const environments = (await listEnvironments(sql)).filter(
    (e) => only === undefined || e.id === only,
  );
  const done: string[] = [];
  const refused: string[] = [];
  for (const environment of environments) {
    const outcome = await repairEnvironment(sql, environment.id, { signingKey, keys, dryRun });
    done.push(...describeOutcome(outcome, environment.name, dryRun));
    if (outcome.problems.length > 0) {
      refused.push(
        `environment ${environment.name}: not repaired, nothing changed: its checkpoints off the chain are not only a fork (resealing would hide this):`,
        ...outcome.problems.map((p) => `  ${p}`),
      );
    }
  }
  if (refused.length > 0) throw new Error([...done, ...refused].join('\n'));
  return done.join('\n');
}

/** `gatehouse audit keys`: the signing keys' public halves, as a --public-keys file holds them. */
export async function auditKeysCommand(sql: Sql): Promise<string> {
  return JSON.stringify(Object.fromEntries(await signingPublicKeys(sql)), null, 2);
}
