import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { signingPublicKeys } from '../../activities/db/audit-checkpoints.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { verifyAudit } from '../../activities/audit/verify-audit.js';
import type { Sql } from '../database/client.js';

export interface VerifyAuditOptions {
  env?: string;
  since?: string;
  publicKeys?: string;
}

/** A --public-keys file: `{"<key id>": "<SPKI PEM>", …}`, as `gatehouse audit keys` prints. */
const publicKeysFile = z.record(z.string(), z.string().includes('BEGIN PUBLIC KEY'));

/**
 * `gatehouse audit verify`: recomputes the trail; resolves with a summary when it is intact,
 * throws (exit 1) naming each problem found, the first first.
 */
export async function verifyAuditCommand(sql: Sql, options: VerifyAuditOptions): Promise<string> {
  const since = options.since === undefined ? undefined : new Date(options.since);
  if (since && Number.isNaN(since.getTime()))
    throw new Error(`--since: not a time: ${options.since}`);
  let environmentId: string | undefined;
  if (options.env !== undefined) {
    const environment = await findEnvironmentByName(sql, options.env);
    if (!environment) throw new Error(`no environment "${options.env}"`);
    environmentId = environment.id;
  }
  const publicKeys = options.publicKeys
    ? new Map(
        Object.entries(
          publicKeysFile.parse(JSON.parse(await readFile(options.publicKeys, 'utf8')) as unknown),
        ),
      )
    : undefined;
  const report = await verifyAudit(sql, {
    ...(environmentId === undefined ? {} : { environmentId }),
    ...(since === undefined ? {} : { since }),
    ...(publicKeys === undefined ? {} : { publicKeys }),
  });
  const counted = `${String(report.checkpoints)} checkpoints, ${String(report.events)} events`;
  if (report.problems.length === 0) {
    return `audit trail intact: ${counted}${publicKeys ? '' : ' (keys trusted from the database; pass --public-keys for keys kept elsewhere)'}`;
  }
  throw new Error(
    `audit trail does not verify (${counted}):\n${report.problems.map((p) => `  ${p}`).join('\n')}`,
  );
}

/** `gatehouse audit keys`: the signing keys' public halves, as a --public-keys file holds them. */
export async function auditKeysCommand(sql: Sql): Promise<string> {
  return JSON.stringify(Object.fromEntries(await signingPublicKeys(sql)), null, 2);
}
