import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSql } from '../../infra/database/client.js';
import { sealEnvironment } from '../../activities/audit/seal-audit.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';

const EVENTS = 100_000;
let db: TestDatabase;
let api: TestApi;
let admin: TestKey;
let other: TestKey;

beforeAll(async () => {
  db = await createTestDatabase();
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
      await seeding`
        insert into audit_events (id, environment_id, time, action, scope, decision, agent_id, via,
          user_external_id, request, response, trace_id)
        select uuid_in(overlay(overlay(md5(n::text) placing '7' from 13) placing '8' from 17)::cstring),
          ${admin.environmentId}, now() - interval '1 hour' + n * interval '1 ms', 'acme.create_task',
          'write', case when n % 10 = 0 then 'blocked' else 'allowed' end, 'agent', 'api',
          'u_' || (n % 100), jsonb_build_object('action', 'acme.create_task',
            'input', jsonb_build_object('title', 'task ' || n, 'notes', repeat('é', 200))),
          jsonb_build_object('ok', true, 'data', jsonb_build_object('id', 't_' || n)), 'trace-' || n
        from generate_series(${from}::int, ${from + STEP - 1}::int) as n`;
    }
    const signingKey = parseAuditSigningKey(Buffer.alloc(32, 7).toString('base64'), 'e1');
    await sealEnvironment({ sql: seeding, signingKey, settleSeconds: 0 }, admin.environmentId);
  } finally {
    await seeding.end();
  }
  api = await startTestApi(testConfig(db.url), db.sql);
}, 120_000);
afterAll(async () => {
  await api.close();
  await db.drop();
});

interface Line {
  event_id: string;
  cursor: string;
  hash: string;
  checkpoint_id: string | null;
  decision: string;
  user: string;
}

/** Reads an export; stops (aborting the request) after `stopAfter` bytes when given. */
async function readExport(query: string, stopAfter?: number) {
  const controller = new AbortController();
  const response = await fetch(`${api.url}/v1/audit/export${query}`, {
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

describe('GET /v1/audit/export', () => {
  it('streams 100,000 events and resumes an interrupted export exactly where it stopped', async () => {
    const started = Date.now();
    const first = await readExport('', 5_000_000);
    expect(first.length).toBeGreaterThan(1000);
    expect(first.length).toBeLessThan(EVENTS);
    const rest = await readExport(`?cursor=${first.at(-1)?.cursor ?? ''}`);
    const ids = [...first, ...rest].map((line) => line.event_id);
    const tookMs = Date.now() - started;
    console.log(
      `export of ${String(EVENTS)} events, interrupted once and resumed: ${String(tookMs)} ms, rss ${String(Math.round(process.memoryUsage().rss / 1e6))} MB`,
    );
    expect(ids).toHaveLength(EVENTS);
    expect(new Set(ids).size).toBe(EVENTS);
    const cursors = [...first, ...rest].map((line) => BigInt(line.cursor));
    expect(cursors.every((c, i) => i === 0 || c > (cursors[i - 1] ?? 0n))).toBe(true);
    expect(rest.at(-1)?.checkpoint_id).toEqual(expect.any(String));
    expect(rest.at(-1)?.hash).toMatch(/^[0-9a-f]{64}$/);
  }, 120_000);

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
