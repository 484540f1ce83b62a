import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { sealEnvironment } from '../../activities/audit/seal-audit.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const EVENTS = 5_000;
let db: TestDatabase;
let api: TestApi;
let admin: TestKey;
let dir: string;

/** Events behind the service's back (the insert trigger hashes them), `n` from `from`. */
async function insertEvents(environmentId: string, from: number, count: number) {
  await insertSyntheticAuditEvents(db.sql, environmentId, { from, count });
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  admin = await createTestKey(db.sql, { env: 'export-cli', access: 'full' });
  const other = await createTestKey(db.sql, { env: 'export-cli-other', access: 'full' });
  // Sealed and unsealed events (checkpoint_id set and null), another environment's between.
  await insertEvents(admin.environmentId, 1, EVENTS / 2);
  await insertEvents(other.environmentId, EVENTS + 1, 100);
  const signingKey = parseAuditSigningKey(Buffer.alloc(32, 9).toString('base64'), 'x1');
  await sealEnvironment({ sql: db.sql, signingKey, settleSeconds: 0 }, admin.environmentId);
  await insertEvents(admin.environmentId, EVENTS / 2 + 1, EVENTS / 2);
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-audit-export-'));
  started.push(() => rm(dir, { recursive: true, force: true }));
}, 120_000);

const exportTo = (out: string, ...args: string[]) =>
  runCli(['audit', 'export', '--env', 'export-cli', '--out', out, ...args], {
    DATABASE_URL: db.url,
  });

async function apiExport(query = ''): Promise<string> {
  const response = await fetch(`${api.url}/v1/audit/export${query}`, {
    headers: bearer(admin.key),
  });
  expect(response.status).toBe(200);
  return response.text();
}

describe('gatehouse audit export', () => {
  let full: string;

  it('writes the lines GET /v1/audit/export streams, byte for byte', async () => {
    const out = path.join(dir, 'full.ndjson');
    const result = await exportTo(out);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(`wrote ${String(EVENTS)} lines to ${out}: a new export\n`);
    full = await readFile(out, 'utf8');
    expect(full).toBe(await apiExport());
    const lines = full.split('\n').filter(Boolean);
    expect(lines).toHaveLength(EVENTS);
    expect(lines.filter((line) => line.endsWith('"checkpoint_id":null}'))).toHaveLength(EVENTS / 2);
  }, 120_000);

  it('completes an interrupted file: its partial line removed, resumed after its last line', async () => {
    const out = path.join(dir, 'interrupted.ndjson');
    const lines = full.split('\n').filter(Boolean);
    const kept = 1234;
    const partial = (lines[kept] ?? '').slice(0, 100);
    await writeFile(out, `${lines.slice(0, kept).join('\n')}\n${partial}`);
    const result = await exportTo(out);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const cursor = (JSON.parse(lines[kept - 1] ?? '') as { cursor: string }).cursor;
    expect(result.stdout).toBe(
      `wrote ${String(EVENTS - kept)} lines to ${out}: resumed after cursor ${cursor}, its partial last line (100 bytes) removed first\n`,
    );
    expect(await readFile(out, 'utf8')).toBe(full);

    // Run again on the complete file: nothing to add, nothing changed.
    const again = await exportTo(out);
    expect(again.stdout).toContain(`wrote 0 lines to ${out}: resumed after cursor`);
    expect(await readFile(out, 'utf8')).toBe(full);
  }, 120_000);

  it('filters as the API does, and refuses a file that is not an export or of another environment', async () => {
    const out = path.join(dir, 'filtered.ndjson');
    const filters = ['--decision', 'blocked', '--user', 'u_10', '--since', '2000-01-01T00:00:00Z'];
    expect((await exportTo(out, ...filters)).code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(
      await apiExport('?decision=blocked&user=u_10&since=2000-01-01T00:00:00Z'),
    );

    const notes = path.join(dir, 'notes.txt');
    await writeFile(notes, 'my notes\n');
    const refused = await exportTo(notes);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not an audit export');
    expect(await readFile(notes, 'utf8')).toBe('my notes\n');

    const otherEnvironment = await runCli(
      ['audit', 'export', '--env', 'export-cli-other', '--out', path.join(dir, 'full.ndjson')],
      { DATABASE_URL: db.url },
    );
    expect(otherEnvironment.code).toBe(1);
    expect(otherEnvironment.stderr).toContain('holds an export of another environment');

    const badTime = await exportTo(path.join(dir, 'never.ndjson'), '--since', 'yesterday');
    expect(badTime.code).toBe(1);
    expect(badTime.stderr).toContain('--since');
  }, 120_000);
});
