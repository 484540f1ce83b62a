import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { markConnectionExpired, markConnectionRevoked } from '../../activities/db/connections.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { startAcmeFixture, type AcmeFixture } from '../support/seed-connection.js';
import { startTestWorker } from '../support/worker.js';
import { historyText } from '../support/workflow-history.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let acme: AcmeFixture;
let api: TestApi;
let full: TestKey;
let readOnly: TestKey;
let otherEnv: TestKey;
/** Every token string a connection of this file ever had: none may leak. */
const secrets: string[] = [];
const ids: Record<string, string> = {};
/** When alice's call of a day ago was written (between the two), by this process's clock. */
const aliceAuditedWithin = { from: 0, to: 0 };

const LIST_KEYS = [
  'calls_7d',
  'connection_count',
  'customer',
  'external_id',
  'id',
  'last_active_at',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Answer {
  status: number;
  body: Record<string, unknown> & {
    data?: Record<string, unknown>[];
    cursor?: string | null;
    error?: { code: string; issues?: { path: string }[] };
  };
}

async function call(key: TestKey, path: string, method = 'GET'): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, { method, headers: bearer(key.key) });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const externalIds = (answer: Answer) => (answer.body.data ?? []).map((u) => u.external_id);

async function seed(externalId: string, customer?: string, env = full) {
  const seeded = await acme.connect({
    environmentId: env.environmentId,
    externalId,
    ...(customer ? { customer } : {}),
  });
  secrets.push(seeded.accessToken, seeded.refreshToken);
  ids[externalId] = seeded.user.id;
  return seeded;
}

async function audit(externalId: string, daysAgo: number) {
  await db.sql`
    insert into audit_events (id, environment_id, time, action, scope, decision, agent_id, via,
      user_external_id, request, trace_id)
    values (${randomUUID()}, ${full.environmentId}, now() - make_interval(days => ${daysAgo}),
      'acme.list_tasks', 'read', 'allowed', 'agent', 'api', ${externalId}, '{}', 'trace')`;
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  acme = started.add(await startAcmeFixture(db.sql, db.url));
  started.add(await startTestWorker(acme.config, db.sql));
  api = started.add(await startTestApi(acme.config, db.sql));
  full = await createTestKey(db.sql, { access: 'full' });
  readOnly = await createTestKey(db.sql, { access: 'read_only' });
  otherEnv = await createTestKey(db.sql, { env: 'other', access: 'full' });

  // Oldest first: alice active, bob expired, carol never connected, dave revoked, erin bare.
  await seed('alice', 'acme-corp');
  await markConnectionExpired(db.sql, (await seed('bob', 'acme-corp')).connection.id);
  ids.carol = (await upsertConnectedUser(db.sql, full.environmentId, 'carol', 'globex')).id;
  await markConnectionRevoked(db.sql, (await seed('dave', 'globex')).connection.id);
  ids.erin = (await upsertConnectedUser(db.sql, full.environmentId, 'erin', undefined)).id;
  await seed('zed', 'acme-corp', otherEnv);
  aliceAuditedWithin.from = Date.now();
  await audit('alice', 1);
  aliceAuditedWithin.to = Date.now();
  await audit('alice', 8);
});

describe('GET /v1/users', () => {
  it('lists the environment’s users newest first, each with exactly the list fields', async () => {
    const answer = await call(readOnly, '/v1/users');
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(['cursor', 'data']);
    expect(answer.body.cursor).toBeNull();
    expect(externalIds(answer)).toEqual(['erin', 'dave', 'carol', 'bob', 'alice']);
    for (const user of answer.body.data ?? []) expect(Object.keys(user).sort()).toEqual(LIST_KEYS);
    const [erin, dave, , bob, alice] = answer.body.data ?? [];
    expect(alice).toEqual({
      id: ids.alice,
      external_id: 'alice',
      customer: 'acme-corp',
      connection_count: 1,
      calls_7d: 1,
      last_active_at: expect.stringMatching(ISO),
    });
    const lastActive = Date.parse(String(alice?.last_active_at));
    // A day before it was written, however long ago that was on a loaded machine (1 ms either
    // way for rounding).
    expect(lastActive).toBeGreaterThanOrEqual(aliceAuditedWithin.from - 86_400_000 - 1);
    expect(lastActive).toBeLessThanOrEqual(aliceAuditedWithin.to - 86_400_000 + 1);
    expect(bob).toMatchObject({ connection_count: 1, calls_7d: 0, last_active_at: null });
    expect(dave).toMatchObject({ customer: 'globex', connection_count: 0 });
    expect(erin).toMatchObject({ id: ids.erin, customer: null, connection_count: 0 });
  });

  it('pages with an opaque cursor until the cursor is null', async () => {
    const seen: unknown[] = [];
    const cursors: (string | null | undefined)[] = [];
    let cursor: string | null | undefined;
    do {
      const query = cursor ? `&cursor=${cursor}` : '';
      const page = await call(full, `/v1/users?limit=2${query}`);
      expect(page.status).toBe(200);
      expect((page.body.data ?? []).length).toBeLessThanOrEqual(2);
      seen.push(...externalIds(page));
      cursor = page.body.cursor;
      cursors.push(cursor);
    } while (cursor);
    expect(seen).toEqual(['erin', 'dave', 'carol', 'bob', 'alice']);
    expect(cursors).toEqual([expect.any(String), expect.any(String), null]);
    // A page that ends exactly at the last user says so: no cursor to an empty page.
    expect((await call(full, '/v1/users?limit=5')).body.cursor).toBeNull();
    const exact = await call(full, `/v1/users?limit=3&cursor=${String(cursors[0])}`);
    expect(externalIds(exact)).toEqual(['carol', 'bob', 'alice']);
    expect(exact.body.cursor).toBeNull();
  });

  it.each([
    ['customer=acme-corp', ['bob', 'alice']],
    ['status=active', ['alice']],
    ['status=needs_reconnect', ['bob']],
    ['status=disconnected', ['erin', 'dave', 'carol']],
    ['customer=globex&status=disconnected', ['dave', 'carol']],
    ['customer=nobody', []],
  ])('filters by %s', async (query, expected) => {
    expect(externalIds(await call(full, `/v1/users?${query}`))).toEqual(expected);
  });

  it.each([
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('alice').toString('base64url')}`, 'cursor'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['status=sleeping', 'status'],
    ['sort=name', 'sort'],
  ])('refuses %s naming %s', async (query, path) => {
    const answer = await call(full, `/v1/users?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.issues?.map((issue) => issue.path)).toEqual([path]);
  });

  it('shows another environment only its own users', async () => {
    expect(externalIds(await call(otherEnv, '/v1/users'))).toEqual(['zed']);
  });
});

describe('GET /v1/users/{user} and its connections', () => {
  it('answers the single form with the environment name', async () => {
    const answer = await call(readOnly, '/v1/users/alice');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: ids.alice,
      external_id: 'alice',
      customer: 'acme-corp',
      connection_count: 1,
      last_active_at: expect.stringMatching(ISO),
      environment: 'test',
      created_at: expect.stringMatching(ISO),
    });
    expect((await call(full, '/v1/users/erin')).body).toMatchObject({ last_active_at: null });
  });

  it('lists a user’s connections with exactly the list fields, revoked ones left out', async () => {
    const alice = await call(readOnly, '/v1/users/alice/connections');
    expect(alice.status).toBe(200);
    expect(Object.keys(alice.body)).toEqual(['data']);
    expect(alice.body.data).toEqual([
      {
        id: expect.any(String),
        app: 'acme',
        status: 'active',
        auth_kind: 'oauth2',
        granted_scopes: ['read', 'write'],
        last_used_at: null,
        last_refreshed_at: null,
      },
    ]);
    expect((await call(full, '/v1/users/bob/connections')).body.data).toMatchObject([
      { status: 'expired' },
    ]);
    expect((await call(full, '/v1/users/dave/connections')).body.data).toEqual([]);
  });

  it.each(['/v1/users/nobody', '/v1/users/nobody/connections'])(
    'answers 404 not_found for an unknown user (%s)',
    async (path) => {
      const answer = await call(full, path);
      expect(answer.status).toBe(404);
      expect(answer.body.error?.code).toBe('not_found');
    },
  );

  it('answers 404 to a key of another environment', async () => {
    for (const path of ['/v1/users/alice', '/v1/users/alice/connections']) {
      expect((await call(otherEnv, path)).status).toBe(404);
    }
    expect((await call(otherEnv, '/v1/users/alice', 'DELETE')).status).toBe(404);
    expect((await call(full, '/v1/users/alice')).status).toBe(200);
  });
});

describe('DELETE /v1/users/{user}', () => {
  it('is refused to a read-only key', async () => {
    const answer = await call(readOnly, '/v1/users/alice', 'DELETE');
    expect(answer.status).toBe(403);
    expect(answer.body.error?.code).toBe('insufficient_access');
    expect((await call(full, '/v1/users/alice')).status).toBe(200);
  });

  it('revokes the connections at the app, deletes the user and its tokens, then 404s', async () => {
    const frank = await seed('frank', 'acme-corp');
    const standard = await createTestKey(db.sql, { access: 'standard' });
    acme.demo.resetStats();

    const answer = await call(standard, '/v1/users/frank', 'DELETE');
    expect(answer).toEqual({ status: 200, body: { ok: true } });
    expect(acme.demo.stats().revocations).toBeGreaterThanOrEqual(1);
    const tasks = await fetch(`${acme.demo.url}/tasks`, {
      headers: { authorization: `Bearer ${frank.accessToken}` },
    });
    expect(tasks.status).toBe(401);
    expect(await db.sql`select 1 from connections where id = ${frank.connection.id}`).toHaveLength(
      0,
    );
    expect(await db.sql`select 1 from connected_users where id = ${frank.user.id}`).toHaveLength(0);

    expect((await call(full, '/v1/users/frank')).status).toBe(404);
    expect((await call(full, '/v1/users/frank', 'DELETE')).status).toBe(404);
    expect((await call(full, `/v1/connections/${frank.connection.id}`)).status).toBe(404);

    const history = await historyText(api.temporal, `delete-user/${frank.user.id}`);
    expect(history).toContain(frank.connection.id);
    for (const secret of secrets) expect(history).not.toContain(secret);
  });
});

describe('secrets', () => {
  it('never writes a token to an API log line', () => {
    expect(api.logs.length).toBeGreaterThan(0);
    for (const line of api.logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });
});
