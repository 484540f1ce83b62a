import { beforeAll, describe, expect, it } from '@jest/globals';
import { v7 as uuidv7 } from 'uuid';
import type postgres from 'postgres';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import { createSql } from '../../infra/database/client.js';
import { exportHorizon } from '../../activities/audit/export-ndjson.js';
import { sealEnvironment } from '../../activities/audit/seal-audit.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { testLogger } from '../support/test-log.js';
import { stopsAfterAll } from '../support/stops.js';

const EVENTS = 100_000;
let db: TestDatabase;
let api: TestApi;
let admin: TestKey;
let other: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  admin = await createTestKey(db.sql, { access: 'full' });
  other = await createTestKey(db.sql, { env: 'other', access: 'full' });
  // 100,000 events behind the service's back (the insert trigger hashes each, as for the
  // service), 10,000 a statement, and sealed, through a connection without the service's 5 s
  // statement timeout: seeding is the test's own work, and a loaded machine may need longer.
  const seeding = createSql(db.url, {
    max: 1,
    statementTimeoutMs: 120_000,
    idleInTransactionTimeoutMs: 120_000,
  });
  try {
    const STEP = 10_000;
    for (let from = 1; from <= EVENTS; from += STEP) {
      await insertSyntheticAuditEvents(seeding, admin.environmentId, { from, count: STEP });
    }
    const signingKey = parseAuditSigningKey(Buffer.alloc(32, 7).toString('base64'), 'e1');
    await sealEnvironment({ sql: seeding, signingKey, settleSeconds: 0 }, admin.environmentId);
  } finally {
    await seeding.end();
  }
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
}, 120_000);

interface Line {
  event_id: string;
  cursor: string;
  hash: string;
  checkpoint_id: string | null;
  decision: string;
  user: string;
}

/**
 * Reads an export; stops (aborting the request) after `stopAfter` bytes when given, or pauses
 * `pause.ms` once `pause.after` bytes are read (a slow consumer).
 */
async function readExport(
  query: string,
  stopAfter?: number,
  { url = api.url, pause }: { url?: string; pause?: { after: number; ms: number } } = {},
) {
  const controller = new AbortController();
  const response = await fetch(`${url}/v1/audit/export${query}`, {
    headers: bearer(admin.key),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('application/x-ndjson');
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    text += decoder.decode(value, { stream: true });
    if (pause !== undefined && bytes >= pause.after) {
      const { ms } = pause;
      pause = undefined;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
    if (stopAfter !== undefined && bytes >= stopAfter) {
      controller.abort();
      break;
    }
  }
  // An interrupted export may end mid-line: only complete lines count.
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
}

/**
 * A transaction of its own that has run `statement` and stays open until `commit()`: a writer
 * still in flight, as the export must wait for.
 */
async function openTransaction(statement: (tx: postgres.TransactionSql) => Promise<unknown>) {
  const writer = createSql(db.url, { max: 1 });
  let commit: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    commit = resolve;
  });
  let done: Promise<unknown> = Promise.resolve();
  await new Promise<void>((resolve, reject) => {
    done = writer.begin(async (tx) => {
      await statement(tx);
      resolve();
      await held;
    });
    done.catch(reject);
  });
  return {
    commit,
    /** Commits (if not yet) and waits for the commit. */
    async end() {
      commit();
      await done.catch(() => undefined);
      await writer.end();
    },
    committed: () => done,
  };
}

describe('GET /v1/audit/export', () => {
  it('streams 100,000 events and resumes an interrupted export exactly where it stopped', async () => {
    const started = Date.now();
    const first = await readExport('', 5_000_000);
    expect(first.length).toBeGreaterThan(1000);
    expect(first.length).toBeLessThan(EVENTS);
    const rest = await readExport(`?cursor=${first.at(-1)?.cursor ?? ''}`);
    const ids = [...first, ...rest].map((line) => line.event_id);
    const tookMs = Date.now() - started;
    // How long it took, for whoever reads the run's log; the test output keeps to results.
    testLogger('info').info(
      { events: EVENTS, tookMs, rssMb: Math.round(process.memoryUsage().rss / 1e6) },
      'audit export of the seeded events, interrupted once and resumed',
    );
    expect(ids).toHaveLength(EVENTS);
    expect(new Set(ids).size).toBe(EVENTS);
    const cursors = [...first, ...rest].map((line) => BigInt(line.cursor));
    expect(cursors.every((c, i) => i === 0 || c > (cursors[i - 1] ?? 0n))).toBe(true);
    expect(rest.at(-1)?.checkpoint_id).toEqual(expect.any(String));
    expect(rest.at(-1)?.hash).toMatch(/^[0-9a-f]{64}$/);
  }, 120_000);

  it('survives a consumer that stops reading for longer than any database timeout', async () => {
    // The export must hold no Postgres transaction or cursor while the client is slow: a
    // paused reader once outlasted the idle-in-transaction timeout and lost its export midway.
    // The timeouts leave each batch's statement time on a loaded machine (500 ms did not always),
    // and the pause outlasts them four times.
    const sql = createSql(db.url, { statementTimeoutMs: 2000, idleInTransactionTimeoutMs: 2000 });
    const strict = await startTestApi(testConfig(db.url), sql);
    try {
      const lines = await readExport('?decision=blocked', undefined, {
        url: strict.url,
        pause: { after: 1_000_000, ms: 8_000 },
      });
      expect(lines).toHaveLength(EVENTS / 10);
    } finally {
      await strict.close();
      await sql.end();
    }
  }, 60_000);

  it('never skips an event whose insert commits after a later-numbered one', async () => {
    // seq is drawn at insert, so an event can commit after one with a higher seq. An export
    // that had already passed the higher seq would never show the other, even when resumed.
    const event = (user: string) => ({
      id: uuidv7(),
      environment_id: admin.environmentId,
      action: 'acme.create_task',
      scope: 'write',
      decision: 'allowed',
      agent_id: 'agent',
      via: 'api',
      user_external_id: user,
      request: {},
      response: {},
      trace_id: user,
    });
    const late = await openTransaction((tx) => tx`insert into audit_events ${tx(event('u_late'))}`);
    try {
      await db.sql`insert into audit_events ${db.sql(event('u_early'))}`;
      const [last] = await db.sql<{ seq: string }[]>`
        select max(seq)::text as seq from audit_events where environment_id = ${admin.environmentId}
          and user_external_id <> 'u_early'`;
      setTimeout(late.commit, 300);
      const exported = await readExport(`?cursor=${last?.seq ?? ''}`);
      await late.committed();
      const resumed = await readExport(`?cursor=${exported.at(-1)?.cursor ?? ''}`);
      expect([...exported, ...resumed].map((line) => line.user)).toEqual(['u_late', 'u_early']);
    } finally {
      await late.end();
    }
  }, 60_000);

  it('gives up on a transaction that stays open, rather than export past its events', async () => {
    const open = await openTransaction((tx) => tx`select pg_current_xact_id()`);
    try {
      expect(await exportHorizon(db.sql, admin.environmentId, 300)).toBeNull();
      // A reader already at the newest event has nothing to wait for (an idle audit.event poll).
      const [newest] = await db.sql<{ seq: string }[]>`
        select max(seq)::text as seq from audit_events where environment_id = ${admin.environmentId}`;
      expect(await exportHorizon(db.sql, admin.environmentId, 300, newest?.seq ?? null)).toEqual({
        upToSeq: newest?.seq,
      });
      await open.end();
      expect(await exportHorizon(db.sql, admin.environmentId, 300)).toEqual({
        upToSeq: expect.stringMatching(/^\d+$/),
      });
    } finally {
      await open.end();
    }
  });

  it('filters as the list does, and shows only the caller environment', async () => {
    const blocked = await readExport('?decision=blocked&user=u_10');
    expect(blocked.length).toBe(EVENTS / 100);
    expect(blocked.every((l) => l.decision === 'blocked' && l.user === 'u_10')).toBe(true);
    const response = await fetch(`${api.url}/v1/audit/export`, { headers: bearer(other.key) });
    expect(await response.text()).toBe('');
  }, 60_000);
});

describe('GET /v1/audit/checkpoints', () => {
  it('lists the sealed checkpoints', async () => {
    const response = await fetch(`${api.url}/v1/audit/checkpoints`, { headers: bearer(admin.key) });
    const body = (await response.json()) as { data: { event_count: number; key_id: string }[] };
    expect(body.data).toEqual([expect.objectContaining({ event_count: EVENTS, key_id: 'e1' })]);
  });
});
