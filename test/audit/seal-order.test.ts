import { beforeAll, describe, expect, it } from '@jest/globals';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import { createSql, type Sql } from '../../infra/database/client.js';
import { sealEnvironment } from '../../activities/audit/seal-audit.js';
import { registerSigningKey } from '../../activities/db/audit-checkpoints.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

// seq is a bigint that travels as text: every place that orders or compares it must do so as a
// number, or '78' sorts after '520'. Seals are run until seq has passed 10, 100, 1,000 and
// 10,000, so any text ordering shows: each round's events are GROWTH times the last round's,
// enough to pass 10,000 two rounds before the end (about 13,000 events; the trail is exported
// and verified three times, so each event more costs).
const SEALS = 40;
const GROWTH = 1.22;
const signingKey = parseAuditSigningKey(Buffer.alloc(32, 9).toString('base64'), 'o1');

let db: TestDatabase;
let seeding: Sql;
let api: TestApi;
let admin: TestKey;
let noise: TestKey;
/** What each seal of the `ordered` environment answered, in order. */
const seals: { id: string; eventCount: number; lastSeq: string }[] = [];
let events = 0;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  admin = await createTestKey(db.sql, { env: 'ordered', access: 'full' });
  noise = await createTestKey(db.sql, { env: 'noise', access: 'full' });
  await registerSigningKey(db.sql, signingKey);
  // The seeding is the test's own work: no 5 s statement timeout on a loaded machine.
  seeding = createSql(db.url, { max: 1, statementTimeoutMs: 120_000 });
  started.push(() => seeding.end());
  let noiseEvents = 0;
  for (let round = 0; round < SEALS; round += 1) {
    // 1, 1, 1, 1, 2, 2, 3, … 2,333: the sum passes 10,000 two rounds before the end.
    const count = Math.max(1, Math.floor(GROWTH ** round));
    await insertSyntheticAuditEvents(seeding, admin.environmentId, {
      from: events + 1,
      count,
      idSeed: 'ordered',
    });
    events += count;
    // Another environment's rows in between: the environment's seqs have gaps.
    await insertSyntheticAuditEvents(seeding, noise.environmentId, {
      from: noiseEvents + 1,
      count: 3,
      idSeed: 'noise',
    });
    noiseEvents += 3;
    const sealed = await sealEnvironment(
      { sql: seeding, signingKey, settleSeconds: 0 },
      admin.environmentId,
    );
    if (sealed) seals.push(sealed);
    if (round % 3 === 0) {
      await sealEnvironment({ sql: seeding, signingKey, settleSeconds: 0 }, noise.environmentId);
    }
  }
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
}, 300_000);

interface ListedCheckpoint {
  id: string;
  after_seq: string;
  last_seq: string;
  previous_hash: string | null;
  hash: string;
  event_count: number;
}

async function listAll(limit: number): Promise<ListedCheckpoint[]> {
  const listed: ListedCheckpoint[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page += 1) {
    const query = `?limit=${String(limit)}${cursor === null ? '' : `&cursor=${cursor}`}`;
    const response = await fetch(`${api.url}/v1/audit/checkpoints${query}`, {
      headers: bearer(admin.key),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: ListedCheckpoint[]; cursor: string | null };
    listed.push(...body.data);
    cursor = body.cursor;
    if (cursor === null) return listed;
  }
  throw new Error('the listing never ended');
}

describe('sealing past powers of ten', () => {
  it('seals every event exactly once, and the export names the checkpoint holding each', async () => {
    const lastSeq = seals.at(-1)?.lastSeq ?? '0';
    expect(BigInt(lastSeq)).toBeGreaterThan(10_000n);
    expect(seals).toHaveLength(SEALS);
    expect(seals.reduce((sum, seal) => sum + seal.eventCount, 0)).toBe(events);
    const lastSeqs = seals.map((seal) => BigInt(seal.lastSeq));
    expect(lastSeqs.every((seq, i) => i === 0 || seq > (lastSeqs[i - 1] ?? 0n))).toBe(true);

    const response = await fetch(`${api.url}/v1/audit/export`, { headers: bearer(admin.key) });
    expect(response.status).toBe(200);
    const lines = (await response.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { cursor: string; checkpoint_id: string | null });
    expect(lines).toHaveLength(events);
    let seal = 0;
    for (const line of lines) {
      while (BigInt(line.cursor) > (lastSeqs[seal] ?? 0n)) seal += 1;
      expect(line.checkpoint_id).toBe(seals[seal]?.id);
    }
  }, 120_000);

  it('passes gatehouse audit verify, whole and --since a checkpoint in the middle', async () => {
    const whole = await runCli(['audit', 'verify', '--env', 'ordered'], { DATABASE_URL: db.url });
    expect(whole).toMatchObject({ code: 0, stderr: '' });
    expect(whole.stdout).toContain(
      `audit trail intact: ${String(SEALS)} checkpoints, ${String(events)} events`,
    );
    // --since checks from the last checkpoint sealed before it, found in seq order too: exactly
    // the checkpoints sealed since, not those after a text-ordered predecessor.
    const [middle] = await db.sql<{ sealedAt: Date }[]>`
      select sealed_at from audit_checkpoints where id = ${seals[SEALS - 8]?.id ?? ''}`;
    const since = await runCli(
      ['audit', 'verify', '--env', 'ordered', '--since', middle?.sealedAt.toISOString() ?? ''],
      { DATABASE_URL: db.url },
    );
    expect(since).toMatchObject({ code: 0, stderr: '' });
    const [after] = await db.sql<{ checkpoints: number; events: number }[]>`
      select count(*)::int as checkpoints, coalesce(sum(event_count), 0)::int as events
      from audit_checkpoints
      where environment_id = ${admin.environmentId} and sealed_at >= ${middle?.sealedAt ?? null}`;
    expect(after?.checkpoints).toBeGreaterThanOrEqual(8);
    expect(since.stdout).toContain(
      `audit trail intact: ${String(after?.checkpoints)} checkpoints, ${String(after?.events)} events`,
    );
    const all = await runCli(['audit', 'verify'], { DATABASE_URL: db.url });
    expect(all).toMatchObject({ code: 0, stderr: '' });
  }, 120_000);

  it('lists every checkpoint exactly once, oldest first, through its cursor', async () => {
    for (const limit of [1, 3, 7, 50]) {
      const listed = await listAll(limit);
      expect(listed.map((checkpoint) => checkpoint.id)).toEqual(seals.map((seal) => seal.id));
      listed.forEach((checkpoint, i) => {
        const previous = listed[i - 1];
        expect(checkpoint.after_seq).toBe(previous?.last_seq ?? '0');
        expect(checkpoint.previous_hash).toBe(previous?.hash ?? null);
      });
    }
  }, 120_000);
});

describe('numeric cursors past bigint', () => {
  // 19 digits, one past the largest bigint: the database cannot compare with it.
  const tooBig = '9223372036854775808';

  it.each([
    ['/v1/audit/checkpoints', tooBig],
    ['/v1/audit/export', tooBig],
    ['/v1/audit/checkpoints', '99999999999999999999'],
    ['/v1/audit/export', '99999999999999999999'],
  ])('%s?cursor=%s answers 400 invalid_request before any line', async (path, cursor) => {
    const response = await fetch(`${api.url}${path}?cursor=${cursor}`, {
      headers: bearer(admin.key),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('cursor');
  });

  it.each(['/v1/audit/checkpoints', '/v1/audit/export'])(
    '%s takes the largest bigint as a cursor: nothing after it',
    async (path) => {
      const response = await fetch(`${api.url}${path}?cursor=9223372036854775807`, {
        headers: bearer(admin.key),
      });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(path.endsWith('export') ? text : JSON.parse(text)).toEqual(
        path.endsWith('export') ? '' : { data: [], cursor: null },
      );
    },
  );
});
