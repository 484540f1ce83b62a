import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  createAuthConfig,
  disableAuthConfig,
  findEnabledAuthConfig,
} from '../../activities/db/auth-configs.js';
import { listApps } from '../../workflows/catalog/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startAcmeFixture, type AcmeFixture } from '../support/seed-connection.js';
import { startTestWorker } from '../support/worker.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let acme: AcmeFixture;
let api: TestApi;
/** auth_configs:read and :manage (a full key's defaults). */
let admin: TestKey;
let readOnly: TestKey;
let standard: TestKey;
let readScopeOnly: TestKey;
let otherScopeOnly: TestKey;
let otherEnv: TestKey;
/** Every client secret this file sent: none may come back or reach the logs. */
const secrets: string[] = [];
/** Every response body this file received, as text. */
const responses: string[] = [];

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  issues?: { path: string; message: string }[];
  required_scope?: string;
  required_access?: string;
  [key: string]: unknown;
}

interface AuthConfigOut {
  id: string;
  app: string;
  name: string;
  clientId: string;
  clientSecretHint: string | null;
  status: 'enabled' | 'disabled';
  created_at: string;
  disabled_at: string | null;
  redirect_uri: string;
}

interface Answer<T = unknown> {
  status: number;
  body: { data: T; nextCursor?: string | null; error: ErrorBody };
}

type Scheme = 'bearer' | 'apiKey';

async function call<T = AuthConfigOut>(
  key: TestKey,
  method: string,
  path: string,
  body?: unknown,
  scheme: Scheme = 'bearer',
): Promise<Answer<T>> {
  const auth: Record<string, string> =
    scheme === 'bearer' ? { authorization: `Bearer ${key.key}` } : { 'x-api-key': key.key };
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  responses.push(text);
  return { status: response.status, body: JSON.parse(text) as Answer<T>['body'] };
}

function newSecret(): string {
  const secret = `shh_${randomBytes(16).toString('hex')}`;
  secrets.push(secret);
  return secret;
}

function create(key: TestKey, body: Record<string, unknown>, scheme: Scheme = 'bearer') {
  if (typeof body.clientSecret === 'string') secrets.push(body.clientSecret);
  return call(key, 'POST', '/v1/auth-configs', body, scheme);
}

function valid(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    app: 'acme',
    name: 'Acme production client',
    clientId: 'acme-client-id',
    clientSecret: newSecret(),
    ...overrides,
  };
}

function expectInvalid(answer: Answer, path: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: 'invalid_request', retryable: false });
  expect(answer.body.error.issues?.map((issue) => issue.path)).toContain(path);
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  acme = started.add(
    await startAcmeFixture(db.sql, db.url, {
      // A platform client for acme, so that funded access can stand in once a config is disabled.
      env: {
        PLATFORM_OAUTH_CLIENTS: JSON.stringify({
          acme: { clientId: 'platform-client', clientSecret: 'platform-secret-value' },
        }),
      },
    }),
  );
  started.add(await startTestWorker(acme.config, db.sql));
  api = started.add(await startTestApi(acme.config, db.sql));
  const business = { env: 'production', audience: 'business' } as const;
  admin = await createTestKey(db.sql, { ...business, access: 'full', agentId: 'ops-console' });
  readOnly = await createTestKey(db.sql, { ...business, access: 'read_only' });
  standard = await createTestKey(db.sql, { ...business, access: 'standard' });
  readScopeOnly = await createTestKey(db.sql, {
    ...business,
    access: 'full',
    scopes: ['auth_configs:read'],
  });
  otherScopeOnly = await createTestKey(db.sql, {
    ...business,
    access: 'full',
    scopes: ['connect_settings:read', 'connect_settings:manage'],
  });
  otherEnv = await createTestKey(db.sql, { env: 'staging', access: 'full', audience: 'business' });
});

describe('POST /v1/auth-configs (create_auth_config)', () => {
  it('creates an enabled config, sealing the secret and showing only its last four characters', async () => {
    const before = Date.now();
    const secret = `${newSecret()}WXYZ`;
    secrets.push(secret);
    const answer = await create(admin, {
      app: 'acme',
      name: 'Acme production client',
      clientId: 'acme-client-id',
      clientSecret: secret,
    });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['data']);
    const data = answer.body.data;
    expect(data).toEqual({
      id: expect.stringMatching(UUID),
      app: 'acme',
      name: 'Acme production client',
      clientId: 'acme-client-id',
      clientSecretHint: 'WXYZ',
      status: 'enabled',
      created_at: expect.stringMatching(ISO),
      disabled_at: null,
      // What to register at the app as its callback: PUBLIC_URL's, not the API's own address.
      redirect_uri: `${acme.config.api.publicUrl}/connect/callback`,
    });
    expect(new Date(data.created_at).getTime()).toBeGreaterThanOrEqual(before - 1000);

    // At rest the secret is sealed, bound to the row; the hint is all that is kept in clear.
    const [row] = await db.sql<{ clientSecretSealed: string; environmentId: string }[]>`
      select client_secret_sealed, environment_id from auth_configs where id = ${data.id}`;
    expect(row?.clientSecretSealed).toMatch(/^v1\.k1\./);
    expect(row?.clientSecretSealed).not.toContain(secret);
    expect(row?.environmentId).toBe(admin.environmentId);
  });

  it('accepts every field at its bounds, hiding the hint of a secret too short to show one', async () => {
    const longSecret = randomBytes(2000).toString('hex');
    const atMost = await create(admin, {
      app: 'acme',
      name: 'n'.repeat(100),
      clientId: 'c'.repeat(300),
      clientSecret: longSecret,
    });
    expect(atMost.status).toBe(200);
    expect(atMost.body.data).toMatchObject({
      name: 'n'.repeat(100),
      clientId: 'c'.repeat(300),
      clientSecretHint: longSecret.slice(-4),
    });

    const atLeast = await create(admin, {
      app: 'acme',
      name: 'n',
      clientId: 'c',
      clientSecret: 's',
    });
    expect(atLeast.status).toBe(200);
    expect(atLeast.body.data).toMatchObject({ name: 'n', clientId: 'c', clientSecretHint: null });

    // Eleven characters: four would be over a third of it. Twelve: eight stay hidden.
    const eleven = await create(admin, valid({ clientSecret: 'abcdefg1234' }));
    expect(eleven.body.data.clientSecretHint).toBeNull();
    const twelve = await create(admin, valid({ clientSecret: 'abcdefgh1234' }));
    expect(twelve.body.data.clientSecretHint).toBe('1234');
  });

  it('refuses an app outside the catalog, naming app and listing the known apps', async () => {
    const known = listApps().map((app) => app.id);
    for (const app of [
      'nope',
      '',
      'a'.repeat(100),
      'ACME',
      '__proto__',
      'constructor',
      'toString',
    ]) {
      const answer = await create(admin, valid({ app }));
      expectInvalid(answer, 'app');
      for (const id of known) expect(answer.body.error.message).toContain(id);
      expect(answer.body.error.issues).toEqual([
        { path: 'app', message: `unknown app; known apps: ${known.join(', ')}` },
      ]);
    }
  });

  it.each([
    ['app over 100 characters', { app: 'a'.repeat(101) }, 'app'],
    ['app not a string', { app: 7 }, 'app'],
    ['app missing', { app: undefined }, 'app'],
    ['empty name', { name: '' }, 'name'],
    ['name over 100 characters', { name: 'n'.repeat(101) }, 'name'],
    ['name missing', { name: undefined }, 'name'],
    ['empty clientId', { clientId: '' }, 'clientId'],
    ['clientId over 300 characters', { clientId: 'c'.repeat(301) }, 'clientId'],
    ['clientId missing', { clientId: undefined }, 'clientId'],
    ['empty clientSecret', { clientSecret: '' }, 'clientSecret'],
    ['clientSecret over 4000 characters', { clientSecret: 's'.repeat(4001) }, 'clientSecret'],
    ['clientSecret missing', { clientSecret: undefined }, 'clientSecret'],
    ['clientSecret not a string', { clientSecret: 1234 }, 'clientSecret'],
    ['an unknown property', { enabled: false }, 'enabled'],
    ['a snake_case spelling', { client_id: 'x' }, 'client_id'],
    // Postgres text cannot hold NUL: refused as the caller's mistake, never a 500.
    ['a NUL in name', { name: 'a\u0000b' }, 'name'],
    ['a NUL in clientId', { clientId: 'c\u0000' }, 'clientId'],
    [
      'a NUL in the last four of clientSecret',
      { clientSecret: `${'s'.repeat(12)}\u0000` },
      'clientSecret',
    ],
  ])('refuses %s', async (_what, overrides, path) => {
    const answer = await create(admin, valid(overrides));
    expectInvalid(answer, path);
  });

  it('refuses a body that is not an object, and stores nothing for refused requests', async () => {
    const [before] = await db.sql<{ n: number }[]>`select count(*)::int as n from auth_configs`;
    expectInvalid(await call(admin, 'POST', '/v1/auth-configs', ['acme']), 'body');
    expectInvalid(await call(admin, 'POST', '/v1/auth-configs'), 'body');
    const [after] = await db.sql<{ n: number }[]>`select count(*)::int as n from auth_configs`;
    expect(after?.n).toBe(before?.n);
  });
});

describe('GET /v1/auth-configs (list_auth_configs)', () => {
  it('pages through every config of the environment, newest first, by nextCursor', async () => {
    const lister = await createTestKey(db.sql, {
      env: 'listing',
      access: 'full',
      audience: 'business',
    });
    const created: AuthConfigOut[] = [];
    for (let i = 1; i <= 5; i++) {
      created.push((await create(lister, valid({ name: `client ${i}` }))).body.data);
    }
    const disabled = await call(lister, 'POST', `/v1/auth-configs/${created[1]?.id ?? ''}/disable`);
    expect(disabled.status).toBe(200);
    const newestFirst = [...created]
      .reverse()
      .map((c) => (c.id === disabled.body.data.id ? disabled.body.data : c));

    const seen: AuthConfigOut[] = [];
    let cursor: string | null | undefined;
    const pageSizes: number[] = [];
    do {
      const query = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const answer = await call<AuthConfigOut[]>(lister, 'GET', `/v1/auth-configs${query}`);
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(['data', 'nextCursor']);
      pageSizes.push(answer.body.data.length);
      seen.push(...answer.body.data);
      cursor = answer.body.nextCursor;
    } while (cursor);
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(newestFirst);
    expect(seen.map((c) => c.status)).toEqual([
      'enabled',
      'enabled',
      'enabled',
      'disabled',
      'enabled',
    ]);

    // The default page holds all five; limit 1 gives the newest and a cursor.
    const all = await call<AuthConfigOut[]>(lister, 'GET', '/v1/auth-configs');
    expect(all.body).toEqual({ data: newestFirst, nextCursor: null });
    const one = await call<AuthConfigOut[]>(lister, 'GET', '/v1/auth-configs?limit=1');
    expect(one.body.data).toEqual([newestFirst[0]]);
    expect(typeof one.body.nextCursor).toBe('string');
    const hundred = await call<AuthConfigOut[]>(lister, 'GET', '/v1/auth-configs?limit=100');
    expect(hundred.body).toEqual({ data: newestFirst, nextCursor: null });
  });

  it('gives 50 by default, and the rest behind nextCursor', async () => {
    const many = await createTestKey(db.sql, { env: 'many', access: 'full', audience: 'business' });
    for (let i = 1; i <= 51; i++) {
      expect((await create(many, valid({ name: `many ${String(i)}` }))).status).toBe(200);
    }
    const first = await call<AuthConfigOut[]>(many, 'GET', '/v1/auth-configs');
    expect(first.body.data).toHaveLength(50);
    expect(typeof first.body.nextCursor).toBe('string');
    const rest = await call<AuthConfigOut[]>(
      many,
      'GET',
      `/v1/auth-configs?cursor=${encodeURIComponent(String(first.body.nextCursor))}`,
    );
    expect(rest.body.data.map((c) => c.name)).toEqual(['many 1']);
    expect(rest.body.nextCursor).toBeNull();
  });

  it('shows only the caller environment', async () => {
    const empty = await call<AuthConfigOut[]>(otherEnv, 'GET', '/v1/auth-configs');
    expect(empty).toEqual({ status: 200, body: { data: [], nextCursor: null } });
  });

  it.each([
    ['limit 0', 'limit=0', 'limit'],
    ['limit 101', 'limit=101', 'limit'],
    ['limit not a number', 'limit=ten', 'limit'],
    ['limit not an integer', 'limit=1.5', 'limit'],
    ['limit given twice', 'limit=1&limit=2', 'limit'],
    ['cursor over 4096 characters', `cursor=${'a'.repeat(4097)}`, 'cursor'],
    ['a cursor of 4096 characters not made by this list', `cursor=${'a'.repeat(4096)}`, 'cursor'],
    ['an empty cursor', 'cursor=', 'cursor'],
    ['a cursor that is a bare id', `cursor=${randomUUID()}`, 'cursor'],
    ['an unknown parameter', 'app=acme', 'app'],
  ])('refuses %s', async (_what, query, path) => {
    expectInvalid(await call(admin, 'GET', `/v1/auth-configs?${query}`), path);
  });

  it('tells a cursor that is too long from one that is merely not a cursor', async () => {
    const tooLong = await call(admin, 'GET', `/v1/auth-configs?cursor=${'a'.repeat(4097)}`);
    const notOurs = await call(admin, 'GET', `/v1/auth-configs?cursor=${'a'.repeat(4096)}`);
    expect(tooLong.body.error.issues?.[0]?.message).toMatch(/4096/);
    expect(notOurs.body.error.issues?.[0]?.message).toBe('not a cursor from this list');
  });
});

describe('POST /v1/auth-configs/{id}/disable (disable_auth_config)', () => {
  it('disables once, then answers 409 conflict', async () => {
    const created = (await create(admin, valid({ name: 'to disable' }))).body.data;
    const before = Date.now();
    const first = await call(admin, 'POST', `/v1/auth-configs/${created.id}/disable`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      data: {
        ...created,
        status: 'disabled',
        disabled_at: expect.stringMatching(ISO),
      },
    });
    expect(new Date(first.body.data.disabled_at ?? '').getTime()).toBeGreaterThanOrEqual(
      before - 1000,
    );

    const second = await call(admin, 'POST', `/v1/auth-configs/${created.id}/disable`);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({
      code: 'conflict',
      retryable: false,
      disabled_at: first.body.data.disabled_at,
    });
    // Still disabled, disabled_at unchanged.
    const [row] = await db.sql<{ enabled: boolean; disabledAt: Date }[]>`
      select enabled, disabled_at from auth_configs where id = ${created.id}`;
    expect(row?.enabled).toBe(false);
    expect(row?.disabledAt.toISOString()).toBe(first.body.data.disabled_at);
  });

  it('lets exactly one of two concurrent disables win', async () => {
    const created = (await create(admin, valid({ name: 'raced' }))).body.data;
    const path = `/v1/auth-configs/${created.id}/disable`;
    const answers = await Promise.all([call(admin, 'POST', path), call(admin, 'POST', path)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
  });

  it.each([
    ['an id of 256 characters', () => 'x'.repeat(256)],
    ['an id that is not a UUID', () => 'not-a-uuid'],
    ['an unknown UUID', () => randomUUID()],
  ])('answers 404 not_found for %s', async (_what, id) => {
    const answer = await call(admin, 'POST', `/v1/auth-configs/${id()}/disable`);
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'not_found', retryable: false });
  });

  it('refuses an id over 256 characters naming id', async () => {
    expectInvalid(await call(admin, 'POST', `/v1/auth-configs/${'x'.repeat(257)}/disable`), 'id');
  });

  it('does not reach another environment', async () => {
    const created = (await create(admin, valid({ name: 'production only' }))).body.data;
    const answer = await call(otherEnv, 'POST', `/v1/auth-configs/${created.id}/disable`);
    expect(answer.status).toBe(404);
    const [row] = await db.sql<{ enabled: boolean }[]>`
      select enabled from auth_configs where id = ${created.id}`;
    expect(row?.enabled).toBe(true);
  });

  it('takes no body: an empty object passes, a property does not', async () => {
    const created = (await create(admin, valid({ name: 'with body' }))).body.data;
    const path = `/v1/auth-configs/${created.id}/disable`;
    expectInvalid(await call(admin, 'POST', path, { reason: 'rotated' }), 'reason');
    expect((await call(admin, 'POST', path, {})).status).toBe(200);
  });

  it('falls back to the next newest enabled config of the app, and to none', async () => {
    const env = await createTestKey(db.sql, { env: 'fallback', access: 'full' });
    const input = {
      environmentId: env.environmentId,
      app: 'acme',
      clientId: 'x',
      clientSecret: 'y',
    };
    const older = await createAuthConfig(db.sql, acme.config.encryption, { ...input, name: 'old' });
    const newer = await createAuthConfig(db.sql, acme.config.encryption, { ...input, name: 'new' });
    expect((await findEnabledAuthConfig(db.sql, env.environmentId, 'acme'))?.id).toBe(newer.id);
    expect((await disableAuthConfig(db.sql, env.environmentId, newer.id)).outcome).toBe('disabled');
    expect((await findEnabledAuthConfig(db.sql, env.environmentId, 'acme'))?.id).toBe(older.id);
    await disableAuthConfig(db.sql, env.environmentId, older.id);
    expect(await findEnabledAuthConfig(db.sql, env.environmentId, 'acme')).toBeNull();
  });
});

describe('a disabled auth config', () => {
  it('is not used for new connect links, while its existing connections keep refreshing', async () => {
    const key = await createTestKey(db.sql, {
      env: 'connecting',
      access: 'full',
      audience: 'business',
    });
    // The fixture connects through an auth config of this environment (the demo app's client).
    const seeded = await acme.connect({ environmentId: key.environmentId, externalId: 'u_old' });
    secrets.push('gatehouse-test-secret');
    const configs = await call<AuthConfigOut[]>(key, 'GET', '/v1/auth-configs');
    expect(configs.body.data).toHaveLength(1);
    const config = configs.body.data[0];
    expect(config).toMatchObject({ app: 'acme', clientId: 'gatehouse-test', status: 'enabled' });
    expect(seeded.connection.authConfigId).toBe(config?.id);

    const link = (user: string) => call(key, 'POST', '/v1/connect/links', { user, app: 'acme' });
    expect((await link('u_before')).status).toBe(201);

    const disabled = await call(key, 'POST', `/v1/auth-configs/${config?.id ?? ''}/disable`);
    expect(disabled.body.data.status).toBe('disabled');

    // No enabled config and funded access off: no new connections.
    const refused = await link('u_after');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'auth_config_required',
      retryable: false,
      app: 'acme',
    });

    // The existing connection refreshes at the app with the disabled config's client.
    const refreshed = await call<unknown>(
      key,
      'POST',
      `/v1/connections/${seeded.connection.id}/refresh`,
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual({
      id: seeded.connection.id,
      status: 'active',
      last_refreshed_at: expect.stringMatching(ISO),
    });
    const [row] = await db.sql<{ authConfigId: string; refreshCount: number }[]>`
      select auth_config_id, refresh_count from connections where id = ${seeded.connection.id}`;
    expect(row).toEqual({ authConfigId: config?.id, refreshCount: 1 });

    // Funded access stands in with the operator's platform client.
    const funded = await call<unknown>(key, 'PUT', '/v1/funded-access', { enabled: true });
    expect(funded.status).toBe(200);
    expect((await link('u_funded')).status).toBe(201);
  });
});

describe('funded access as the fallback client', () => {
  let key: TestKey;

  beforeAll(async () => {
    key = await createTestKey(db.sql, {
      env: 'funded-fallback',
      access: 'full',
      audience: 'business',
    });
  });

  const link = (user: string) =>
    call<unknown>(key, 'POST', '/v1/connect/links', { user, app: 'acme' });

  /**
   * Follows a connect link as a browser does, up to the app: opens the link, presses Continue
   * and returns where the start step sends the browser (the app's authorize URL). The API
   * listens on a random port, so the links' public origin is swapped for the API's own.
   */
  async function authorizeRedirect(user: string): Promise<URL> {
    const created = await link(user);
    expect(created.status).toBe(201);
    const linkUrl = new URL((created.body as unknown as { url: string }).url);
    const landing = await fetch(`${api.url}${linkUrl.pathname}`);
    expect(landing.status).toBe(200);
    const start = /<a[^>]+href="([^"]+\/start)"/.exec(await landing.text())?.[1];
    expect(start).toBeDefined();
    const startUrl = new URL((start ?? '').replace(/&amp;/g, '&'), linkUrl);
    expect(startUrl.pathname).toBe(`${linkUrl.pathname}/start`);
    const started = await fetch(`${api.url}${startUrl.pathname}`, { redirect: 'manual' });
    expect(started.status).toBe(302);
    const location = new URL(started.headers.get('location') ?? '', api.url);
    expect(location.origin).toBe(new URL(acme.demo.url).origin);
    expect(location.searchParams.get('response_type')).toBe('code');
    expect(location.searchParams.get('state')).toBeTruthy();
    return location;
  }

  async function expectRefused(user: string): Promise<void> {
    const refused = await link(user);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'auth_config_required',
      retryable: false,
      app: 'acme',
    });
  }

  it('with no enabled config and funded access off, refuses a link with 409 auth_config_required', async () => {
    const before = await db.sql<{ n: number }[]>`
      select count(*)::int as n from connect_links`;
    await expectRefused('u_unfunded');
    const after = await db.sql<{ n: number }[]>`
      select count(*)::int as n from connect_links`;
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('sends the user to the app with the platform client when funded access stands in', async () => {
    expect((await call<unknown>(key, 'PUT', '/v1/funded-access', { enabled: true })).status).toBe(
      200,
    );
    const location = await authorizeRedirect('u_funded_fallback');
    expect(location.searchParams.get('client_id')).toBe('platform-client');
  });

  it('lets an enabled auth config win over funded access, and falls back once it is disabled', async () => {
    const own = await create(key, valid({ name: 'own client', clientId: 'env-own-client' }));
    expect(own.status).toBe(200);
    const withConfig = await authorizeRedirect('u_own_client');
    expect(withConfig.searchParams.get('client_id')).toBe('env-own-client');
    // The redirect URI the answer named is the one the app is sent, whatever app or client.
    expect(withConfig.searchParams.get('redirect_uri')).toBe(own.body.data.redirect_uri);
    const listed = await call<AuthConfigOut[]>(key, 'GET', '/v1/auth-configs');
    expect(listed.body.data.map((config) => config.redirect_uri)).toEqual(
      listed.body.data.map(() => own.body.data.redirect_uri),
    );

    const disabled = await call(key, 'POST', `/v1/auth-configs/${own.body.data.id}/disable`);
    expect(disabled.status).toBe(200);
    const fallback = await authorizeRedirect('u_after_disable');
    expect(fallback.searchParams.get('client_id')).toBe('platform-client');
  });

  it('refuses links again once funded access is turned off', async () => {
    expect((await call<unknown>(key, 'PUT', '/v1/funded-access', { enabled: false })).status).toBe(
      200,
    );
    await expectRefused('u_funding_ended');
  });
});

describe('access', () => {
  it.each([
    ['bearer', 'Authorization: Bearer'],
    ['apiKey', 'X-API-Key'],
  ] as const)('accepts the %s scheme (%s) on every operation', async (scheme, _header) => {
    const created = await create(admin, valid({ name: `via ${scheme}` }), scheme);
    expect(created.status).toBe(200);
    const list = await call<AuthConfigOut[]>(admin, 'GET', '/v1/auth-configs', undefined, scheme);
    expect(list.status).toBe(200);
    const disabled = await call(
      admin,
      'POST',
      `/v1/auth-configs/${created.body.data.id}/disable`,
      undefined,
      scheme,
    );
    expect(disabled.status).toBe(200);
  });

  it('refuses a missing or unknown key with invalid_api_key', async () => {
    const none = await fetch(`${api.url}/v1/auth-configs`);
    expect(none.status).toBe(401);
    const wrong = await fetch(`${api.url}/v1/auth-configs`, {
      headers: { 'x-api-key': 'gk_production_nope' },
    });
    expect(wrong.status).toBe(401);
  });

  it('needs auth_configs:manage to create and disable, auth_configs:read to list', async () => {
    const target = (await create(admin, valid({ name: 'scoped' }))).body.data;
    const manage = { required_scope: 'auth_configs:manage' };
    const refusals: [TestKey, string, string, Record<string, string>][] = [
      [readScopeOnly, 'POST', '/v1/auth-configs', manage],
      [readScopeOnly, 'POST', `/v1/auth-configs/${target.id}/disable`, manage],
      [standard, 'POST', '/v1/auth-configs', manage],
      [standard, 'POST', `/v1/auth-configs/${target.id}/disable`, manage],
      [readOnly, 'POST', '/v1/auth-configs', { required_access: 'standard' }],
      [readOnly, 'POST', `/v1/auth-configs/${target.id}/disable`, { required_access: 'standard' }],
      [otherScopeOnly, 'GET', '/v1/auth-configs', { required_scope: 'auth_configs:read' }],
      [otherScopeOnly, 'POST', '/v1/auth-configs', manage],
    ];
    for (const [key, method, path, extra] of refusals) {
      const answer = await call(
        key,
        method,
        path,
        method === 'POST' && !path.endsWith('disable') ? valid() : undefined,
      );
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 'insufficient_access', ...extra });
    }
    for (const key of [readScopeOnly, standard, readOnly]) {
      expect((await call(key, 'GET', '/v1/auth-configs')).status).toBe(200);
    }
    const [row] = await db.sql<{ enabled: boolean }[]>`
      select enabled from auth_configs where id = ${target.id}`;
    expect(row?.enabled).toBe(true);
  });
});

describe('the OpenAPI description', () => {
  it('describes the three operations, the write-only secret and the list envelope', async () => {
    const doc = (await (await fetch(`${api.url}/openapi/management.json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: {
        schemas: Record<string, { properties: Record<string, Record<string, unknown>> }>;
      };
    };
    expect(doc.paths['/v1/auth-configs']?.post).toMatchObject({
      operationId: 'create_auth_config',
      'x-service-scopes': ['auth_configs:manage'],
      'x-service-mcp': 'proposal',
      'x-service-audience': 'business',
    });
    expect(doc.paths['/v1/auth-configs']?.get).toMatchObject({
      operationId: 'list_auth_configs',
      'x-service-scopes': ['auth_configs:read'],
      'x-service-mcp': 'read',
    });
    expect(doc.paths['/v1/auth-configs/{id}/disable']?.post).toMatchObject({
      operationId: 'disable_auth_config',
      'x-service-scopes': ['auth_configs:manage'],
    });
    const input = doc.components.schemas.create_auth_config_input;
    expect(input?.properties.clientSecret).toMatchObject({ writeOnly: true, maxLength: 4000 });
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'create_auth_config_output',
        'list_auth_configs_output',
        'disable_auth_config_output',
      ]),
    );
    expect(doc.components.schemas.create_auth_config_output?.properties).not.toHaveProperty(
      'clientSecret',
    );
    const listed = JSON.stringify(doc.paths['/v1/auth-configs']?.get?.responses);
    expect(listed).toContain('nextCursor');
  });
});

describe('secrecy', () => {
  it('never answers with a client secret nor logs one', () => {
    // Secrets shorter than a few characters would match by chance; every secret here is long
    // except the deliberate one-character one.
    const checked = secrets.filter((secret) => secret.length >= 12);
    expect(checked.length).toBeGreaterThan(20);
    const answered = responses.join('\n');
    const logged = api.logs.join('\n');
    for (const secret of checked) {
      expect(answered).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });
});
