import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { revealMcpOAuthClientSecret } from '../../activities/db/mcp-oauth-clients.js';
import type { Config } from '../../infra/config.js';
import { listApps } from '../../workflows/catalog/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let config: Config;
let api: TestApi;
/** Full access (every scope), agent `ops-console`, environment `production`. */
let manager: TestKey;
/** Standard access with only `auth_configs:read`. */
let readOnlyScope: TestKey;
/** Full access with only `auth_configs:manage`. */
let manageOnlyScope: TestKey;
/** Read-only access level with the default (read) scopes. */
let readOnlyAccess: TestKey;
/** Full access in another environment. */
let stranger: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url);
  api = started.add(await startTestApi(config, db.sql));
  const business = { env: 'production', audience: 'business' } as const;
  manager = await createTestKey(db.sql, { ...business, access: 'full', agentId: 'ops-console' });
  readOnlyScope = await createTestKey(db.sql, {
    ...business,
    access: 'standard',
    scopes: ['auth_configs:read'],
  });
  manageOnlyScope = await createTestKey(db.sql, {
    ...business,
    access: 'full',
    scopes: ['auth_configs:manage'],
  });
  readOnlyAccess = await createTestKey(db.sql, { ...business, access: 'read_only' });
  stranger = await createTestKey(db.sql, { env: 'staging', access: 'full', audience: 'business' });
});

// ---- helpers ----

let environments = 0;

/**
 * A full key in an environment of its own, for a test that needs an app's client list to itself:
 * `app` must be a catalog app, and the catalog has only seven.
 */
async function isolatedManager(): Promise<TestKey> {
  environments += 1;
  return createTestKey(db.sql, {
    env: `mcp-${String(environments)}`,
    access: 'full',
    audience: 'business',
    agentId: 'ops-console',
  });
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Every response body of the file, to show that no secret ever comes back. */
const responseTexts: string[] = [];
/** Every client secret the file sent, valid or not. */
const secretsSent: string[] = [];

function newSecret(): string {
  const secret = `mcp-secret-${randomBytes(16).toString('hex')}`;
  secretsSent.push(secret);
  return secret;
}

async function call(
  key: TestKey | null,
  method: string,
  path: string,
  options: {
    body?: unknown;
    raw?: string;
    contentType?: string;
    scheme?: 'bearer' | 'apiKey';
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key) {
    if (options.scheme === 'apiKey') headers['x-api-key'] = key.key;
    else headers.authorization = `Bearer ${key.key}`;
  }
  const payload =
    options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers,
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await response.text();
  responseTexts.push(text);
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

interface ClientOut {
  id: string;
  app: string;
  issuer: string;
  clientId: string;
  authMethod: string;
  source: string;
  status: string;
  selected: boolean;
  clientSecretHint: string | null;
  created_at: string;
  updated_at: string;
  rotated_at: string | null;
  retired_at: string | null;
}

interface Settings {
  apps: { app: string; selected_client_id: string | null; clients: ClientOut[] }[];
  branding: Record<string, unknown> | null;
}

function dataOf(answer: Answer): unknown {
  if (answer.status !== 200) throw new Error(`expected 200, got ${JSON.stringify(answer)}`);
  return answer.body.data;
}

const clientOf = (answer: Answer) => dataOf(answer) as ClientOut;
const recordOf = (answer: Answer) => dataOf(answer) as Record<string, unknown>;

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function expectIso(value: unknown): void {
  expect(typeof value).toBe('string');
  expect(new Date(value as string).toISOString()).toBe(value);
}

let registrations = 0;

/** A valid create body; each call registers a distinct client id. */
function clientBody(overrides: Record<string, unknown> = {}, app = 'acme') {
  registrations += 1;
  return {
    app,
    client: {
      issuer: 'https://auth.example.com',
      clientId: `client-${registrations}`,
      clientSecret: newSecret(),
      authMethod: 'client_secret_basic',
      source: 'byo',
      ...overrides,
    },
  };
}

async function create(overrides: Record<string, unknown> = {}, app = 'acme', key = manager) {
  return clientOf(
    await call(key, 'POST', '/v1/mcp-oauth-clients', { body: clientBody(overrides, app) }),
  );
}

async function settings(key: TestKey = manager): Promise<Settings> {
  return dataOf(await call(key, 'GET', '/v1/mcp-oauth-clients')) as Settings;
}

function issuePaths(answer: Answer): string[] {
  expect(answer.status).toBe(400);
  const error = answer.body.error as { code: string; issues: { path: string }[] };
  expect(error.code).toBe('invalid_request');
  return error.issues.map((issue) => issue.path);
}

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.body.error).toMatchObject({ code, retryable: false });
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
const UNKNOWN_UUID = '018f0e4c-8a7b-7c3d-9e1f-2a3b4c5d6e7f';

// ---- the operations ----

describe('MCP OAuth clients: happy paths', () => {
  it('starts with no clients and no branding', async () => {
    expect(await settings()).toEqual({ apps: [], branding: null });
  });

  it('creates a confidential client: every field shown, the secret only as a hint', async () => {
    const secret = newSecret();
    const answer = await call(manager, 'POST', '/v1/mcp-oauth-clients', {
      body: {
        app: 'acme',
        client: {
          issuer: 'https://auth.acme.example',
          clientId: 'gatehouse-acme',
          clientSecret: secret,
          authMethod: 'client_secret_post',
          source: 'byo',
        },
      },
    });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['data']);
    const client = answer.body.data as ClientOut;
    expect(client).toEqual({
      id: expect.stringMatching(UUID_V7),
      app: 'acme',
      issuer: 'https://auth.acme.example',
      clientId: 'gatehouse-acme',
      authMethod: 'client_secret_post',
      source: 'byo',
      status: 'active',
      selected: false,
      clientSecretHint: secret.slice(-4),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      rotated_at: null,
      retired_at: null,
    });
    expectIso(client.created_at);
    expect(client.updated_at).toBe(client.created_at);

    // Sealed at rest, bound to the row, and still the same secret when opened.
    const [row] = await db.sql<{ clientSecretSealed: string }[]>`
      select client_secret_sealed from mcp_oauth_clients where id = ${client.id}`;
    expect(row?.clientSecretSealed).toMatch(/^v1\./);
    expect(row?.clientSecretSealed).not.toContain(secret);
    expect(
      await revealMcpOAuthClientSecret(db.sql, config.encryption, manager.environmentId, client.id),
    ).toBe(secret);
  });

  it('creates a public client (authMethod none) without a secret or hint', async () => {
    const client = await create({ authMethod: 'none', clientSecret: undefined }, 'linear');
    expect(client).toMatchObject({
      app: 'linear',
      authMethod: 'none',
      clientSecretHint: null,
      status: 'active',
      selected: false,
    });
    expect(
      await revealMcpOAuthClientSecret(db.sql, config.encryption, manager.environmentId, client.id),
    ).toBeNull();
  });

  it('gives no hint for a secret too short to hint at safely', async () => {
    const short = 'abcdefghijk'; // 11 characters: four would be over a third of it
    secretsSent.push(short);
    expect((await create({ clientSecret: short })).clientSecretHint).toBeNull();
    const twelve = 'abcdefghijkl';
    expect((await create({ clientSecret: twelve })).clientSecretHint).toBe('ijkl');
  });

  it('lists the clients per app, oldest first, with the selected one of each', async () => {
    const owner = await isolatedManager();
    const first = await create({}, 'github', owner);
    const second = await create({}, 'github', owner);
    await create({}, 'acme', owner);
    const listed = await settings(owner);
    const github = listed.apps.find((entry) => entry.app === 'github');
    expect(github).toEqual({ app: 'github', selected_client_id: null, clients: [first, second] });
    expect(listed.apps.map((entry) => entry.app)).toEqual(['acme', 'github']);
    expect(listed.branding).toBeNull();
  });

  it('selects a client, and selecting another moves the selection', async () => {
    const owner = await isolatedManager();
    const a = await create({}, 'slack', owner);
    const b = await create({}, 'slack', owner);
    const selectedA = clientOf(await call(owner, 'POST', `/v1/mcp-oauth-clients/${a.id}/select`));
    expect(selectedA).toEqual({ ...a, selected: true, updated_at: expect.any(String) });
    expect(selectedA.updated_at > a.updated_at).toBe(true);
    let slack = (await settings(owner)).apps.find((entry) => entry.app === 'slack');
    expect(slack?.selected_client_id).toBe(a.id);

    const selectedB = clientOf(
      await call(owner, 'POST', `/v1/mcp-oauth-clients/${b.id}/select`, { body: {} }),
    );
    expect(selectedB.selected).toBe(true);
    slack = (await settings(owner)).apps.find((entry) => entry.app === 'slack');
    expect(slack?.selected_client_id).toBe(b.id);
    expect(slack?.clients.map((client) => [client.id, client.selected])).toEqual([
      [a.id, false],
      [b.id, true],
    ]);
    expect((slack?.clients[0]?.updated_at ?? '') > selectedA.updated_at).toBe(true);

    // Selecting the selected client again changes nothing.
    const again = clientOf(await call(owner, 'POST', `/v1/mcp-oauth-clients/${b.id}/select`));
    expect(again).toEqual(selectedB);
  });

  it('keeps one selected client per app when selections race', async () => {
    const owner = await isolatedManager();
    const clients = await Promise.all(Array.from({ length: 8 }, () => create({}, 'notion', owner)));
    const answers = await Promise.all(
      clients.map((client) => call(owner, 'POST', `/v1/mcp-oauth-clients/${client.id}/select`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(clients.map(() => 200));
    const race = (await settings(owner)).apps.find((entry) => entry.app === 'notion');
    const selected = race?.clients.filter((client) => client.selected) ?? [];
    expect(selected).toHaveLength(1);
    expect(race?.selected_client_id).toBe(selected[0]?.id);
  });

  it('selection is per app: selecting in one app leaves another alone', async () => {
    const owner = await isolatedManager();
    const one = await create({}, 'linear', owner);
    const two = await create({}, 'gmail', owner);
    await call(owner, 'POST', `/v1/mcp-oauth-clients/${one.id}/select`);
    await call(owner, 'POST', `/v1/mcp-oauth-clients/${two.id}/select`);
    const apps = (await settings(owner)).apps;
    expect(apps.find((entry) => entry.app === 'linear')?.selected_client_id).toBe(one.id);
    expect(apps.find((entry) => entry.app === 'gmail')?.selected_client_id).toBe(two.id);
  });

  it('rotates the secret, and the client id when given', async () => {
    const client = await create({}, 'notion');
    const secret = newSecret();
    const rotated = clientOf(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${client.id}/rotate`, {
        body: { clientSecret: secret },
      }),
    );
    expect(rotated).toEqual({
      ...client,
      clientSecretHint: secret.slice(-4),
      rotated_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expectIso(rotated.rotated_at);
    expect(rotated.updated_at).toBe(rotated.rotated_at);
    expect((rotated.rotated_at ?? '') > client.created_at).toBe(true);
    expect(
      await revealMcpOAuthClientSecret(db.sql, config.encryption, manager.environmentId, client.id),
    ).toBe(secret);

    const next = newSecret();
    const withId = clientOf(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${client.id}/rotate`, {
        body: { clientSecret: next, clientId: 'notion-client-2' },
      }),
    );
    expect(withId).toMatchObject({
      id: client.id,
      clientId: 'notion-client-2',
      clientSecretHint: next.slice(-4),
      status: 'active',
    });
    expect((withId.rotated_at ?? '') > (rotated.rotated_at ?? '')).toBe(true);
  });

  it('retires a client for good: unselected, secret erased, shown as retired', async () => {
    const owner = await isolatedManager();
    const client = await create({}, 'gmail', owner);
    await call(owner, 'POST', `/v1/mcp-oauth-clients/${client.id}/select`);
    const retired = clientOf(
      await call(owner, 'POST', `/v1/mcp-oauth-clients/${client.id}/retire`),
    );
    expect(retired).toEqual({
      ...client,
      status: 'retired',
      selected: false,
      retired_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expectIso(retired.retired_at);
    expect(retired.updated_at).toBe(retired.retired_at);
    const gmail = (await settings(owner)).apps.find((entry) => entry.app === 'gmail');
    expect(gmail).toEqual({ app: 'gmail', selected_client_id: null, clients: [retired] });
    expect(
      await revealMcpOAuthClientSecret(db.sql, config.encryption, owner.environmentId, client.id),
    ).toBeNull();

    // The same registration may be made again once the old one is retired.
    const again = await call(owner, 'POST', '/v1/mcp-oauth-clients', {
      body: {
        app: 'gmail',
        client: {
          issuer: client.issuer,
          clientId: client.clientId,
          clientSecret: newSecret(),
          authMethod: 'client_secret_basic',
          source: 'byo',
        },
      },
    });
    expect(again.status).toBe(200);
  });

  it('retires an unselected client without touching the selected one', async () => {
    const kept = await create({}, 'google-calendar');
    const dropped = await create({}, 'google-calendar');
    await call(manager, 'POST', `/v1/mcp-oauth-clients/${kept.id}/select`);
    await call(manager, 'POST', `/v1/mcp-oauth-clients/${dropped.id}/retire`, { body: {} });
    const calendar = (await settings()).apps.find((entry) => entry.app === 'google-calendar');
    expect(calendar?.selected_client_id).toBe(kept.id);
  });

  it('sets the branding, shows it in the settings, and a PUT replaces all of it', async () => {
    const full = {
      client_name: 'Acme Agents',
      logo_uri: 'https://acme.example/logo.png',
      client_uri: 'https://acme.example',
      policy_uri: 'https://acme.example/privacy',
      tos_uri: 'https://acme.example/terms',
    };
    const answer = await call(manager, 'PUT', '/v1/mcp-client-branding', { body: full });
    expect(answer.status).toBe(200);
    const branding = recordOf(answer);
    expect(branding).toEqual({
      ...full,
      updated_at: expect.any(String),
      updated_by: 'ops-console',
    });
    expectIso(branding.updated_at);
    expect((await settings()).branding).toEqual(branding);

    const nameOnly = recordOf(
      await call(manager, 'PUT', '/v1/mcp-client-branding', {
        body: { client_name: 'Acme Ägents 🤖' },
      }),
    );
    expect(nameOnly).toEqual({
      client_name: 'Acme Ägents 🤖',
      logo_uri: null,
      client_uri: null,
      policy_uri: null,
      tos_uri: null,
      updated_at: expect.any(String),
      updated_by: 'ops-console',
    });
    expect((await settings()).branding).toEqual(nameOnly);
  });

  it('accepts both security schemes', async () => {
    for (const scheme of ['bearer', 'apiKey'] as const) {
      expect((await call(manager, 'GET', '/v1/mcp-oauth-clients', { scheme })).status).toBe(200);
      const created = await call(manager, 'POST', '/v1/mcp-oauth-clients', {
        body: clientBody({}, 'acme'),
        scheme,
      });
      expect(created.status).toBe(200);
      const id = (created.body.data as ClientOut).id;
      expect(
        (await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/select`, { scheme })).status,
      ).toBe(200);
      expect(
        (
          await call(manager, 'PUT', '/v1/mcp-client-branding', {
            body: { client_name: 'Acme' },
            scheme,
          })
        ).status,
      ).toBe(200);
      const rotated = await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/rotate`, {
        body: { clientSecret: newSecret(), clientId: `rotated-${scheme}` },
        scheme,
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body.data).toMatchObject({ id, clientId: `rotated-${scheme}` });
      expect(typeof (rotated.body.data as ClientOut).rotated_at).toBe('string');
      const retired = await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/retire`, {
        scheme,
      });
      expect(retired.status).toBe(200);
      expect(retired.body.data).toMatchObject({ id, status: 'retired', selected: false });
    }
    expectError(await call(null, 'GET', '/v1/mcp-oauth-clients'), 401, 'invalid_api_key');
  });
});

// ---- state conflicts and missing clients ----

describe('MCP OAuth clients: states', () => {
  let retired: ClientOut;

  beforeAll(async () => {
    retired = await create({}, 'linear');
    dataOf(await call(manager, 'POST', `/v1/mcp-oauth-clients/${retired.id}/retire`));
  });

  it('refuses to retire twice', async () => {
    expectError(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${retired.id}/retire`),
      409,
      'conflict',
    );
  });

  it('refuses to rotate a retired client', async () => {
    expectError(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${retired.id}/rotate`, {
        body: { clientSecret: newSecret() },
      }),
      409,
      'conflict',
    );
  });

  it('refuses to select a retired client', async () => {
    expectError(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${retired.id}/select`),
      409,
      'conflict',
    );
    const app = (await settings()).apps.find((entry) => entry.app === 'linear');
    expect(app?.selected_client_id).toBeNull();
  });

  it('refuses to rotate a public client: it has no secret', async () => {
    const open = await create({ authMethod: 'none', clientSecret: undefined }, 'linear');
    expectError(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${open.id}/rotate`, {
        body: { clientSecret: newSecret() },
      }),
      409,
      'conflict',
    );
  });

  it('refuses a second active registration of the same client for an app', async () => {
    const body = clientBody({}, 'slack');
    expect((await call(manager, 'POST', '/v1/mcp-oauth-clients', { body })).status).toBe(200);
    const twice = await call(manager, 'POST', '/v1/mcp-oauth-clients', {
      body: { ...body, client: { ...body.client, clientSecret: newSecret() } },
    });
    expectError(twice, 409, 'conflict');
    // Rotating another client onto that client id is the same clash.
    const other = await create({ issuer: body.client.issuer }, 'slack');
    expectError(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${other.id}/rotate`, {
        body: { clientSecret: newSecret(), clientId: body.client.clientId },
      }),
      409,
      'conflict',
    );
    // Another app may register the same client.
    expect(
      (
        await call(manager, 'POST', '/v1/mcp-oauth-clients', {
          body: { ...body, app: 'github' },
        })
      ).status,
    ).toBe(200);
  });

  it.each([
    ['an unknown id', UNKNOWN_UUID],
    ['the nil UUID', NIL_UUID],
    ['the all-f UUID', MAX_UUID],
  ])('answers 404 for %s', async (_name, id) => {
    for (const verb of ['retire', 'select']) {
      expectError(
        await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/${verb}`),
        404,
        'not_found',
      );
    }
    expectError(
      await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/rotate`, {
        body: { clientSecret: newSecret() },
      }),
      404,
      'not_found',
    );
  });

  it("keeps environments apart: another environment's client is not found", async () => {
    const owner = await isolatedManager();
    const mine = await create({}, 'notion', owner);
    for (const verb of ['retire', 'select']) {
      expectError(
        await call(stranger, 'POST', `/v1/mcp-oauth-clients/${mine.id}/${verb}`),
        404,
        'not_found',
      );
    }
    expectError(
      await call(stranger, 'POST', `/v1/mcp-oauth-clients/${mine.id}/rotate`, {
        body: { clientSecret: newSecret() },
      }),
      404,
      'not_found',
    );
    expect(await settings(stranger)).toEqual({ apps: [], branding: null });
    // Untouched in its own environment.
    const shared = (await settings(owner)).apps.find((entry) => entry.app === 'notion');
    expect(shared?.clients).toEqual([mine]);
  });
});

// ---- access ----

describe('MCP OAuth clients: scopes and access levels', () => {
  let target: ClientOut;

  beforeAll(async () => {
    target = await create({}, 'gmail');
  });

  const changes = () =>
    [
      ['POST', '/v1/mcp-oauth-clients', clientBody({}, 'gmail')],
      ['POST', `/v1/mcp-oauth-clients/${target.id}/rotate`, { clientSecret: newSecret() }],
      ['POST', `/v1/mcp-oauth-clients/${target.id}/retire`, undefined],
      ['POST', `/v1/mcp-oauth-clients/${target.id}/select`, undefined],
      ['PUT', '/v1/mcp-client-branding', { client_name: 'Nope' }],
    ] as const;

  it('refuses every change from a key without auth_configs:manage', async () => {
    for (const [method, path, body] of changes()) {
      const answer = await call(readOnlyScope, method, path, { body });
      expectError(answer, 403, 'insufficient_access');
      expect(answer.body.error).toMatchObject({ required_scope: 'auth_configs:manage' });
    }
  });

  it('refuses every change from a read-only key', async () => {
    for (const [method, path, body] of changes()) {
      expectError(await call(readOnlyAccess, method, path, { body }), 403, 'insufficient_access');
    }
    expect((await call(readOnlyAccess, 'GET', '/v1/mcp-oauth-clients')).status).toBe(200);
  });

  it('refuses the settings to a key without auth_configs:read', async () => {
    const answer = await call(manageOnlyScope, 'GET', '/v1/mcp-oauth-clients');
    expectError(answer, 403, 'insufficient_access');
    expect(answer.body.error).toMatchObject({ required_scope: 'auth_configs:read' });
    expect((await call(readOnlyScope, 'GET', '/v1/mcp-oauth-clients')).status).toBe(200);
  });

  it('lets a key with only auth_configs:manage make changes', async () => {
    const answer = await call(manageOnlyScope, 'POST', `/v1/mcp-oauth-clients/${target.id}/select`);
    expect(answer.status).toBe(200);
  });

  it('left the target unchanged by the refused calls', async () => {
    const app = (await settings()).apps.find((entry) => entry.app === 'gmail');
    expect(app?.clients).toHaveLength(1);
    expect(app?.clients[0]).toMatchObject({
      id: target.id,
      status: 'active',
      clientSecretHint: target.clientSecretHint,
      rotated_at: null,
    });
  });
});

// ---- validation ----

/** Test cases `[what, input, path]`, titled with the path the refusal must name. */
function named<T>(cases: [string, T, string][]): [string, T, string][] {
  return cases.map(([what, input, path]) => [`${what}, naming ${path}`, input, path]);
}

const long = (length: number, character = 'a') => character.repeat(length);
const CR = '\r';
const LF = '\n';
const NUL = '\u0000';

describe('MCP OAuth clients: create_mcp_oauth_client validation', () => {
  const base = () => clientBody({}, 'acme');

  it.each(
    named<(body: ReturnType<typeof clientBody>) => unknown>([
      ['app missing', ({ client }) => ({ client }), 'app'],
      ['app empty', (b) => ({ ...b, app: '' }), 'app'],
      ['app 101 characters', (b) => ({ ...b, app: long(101) }), 'app'],
      ['app not a string', (b) => ({ ...b, app: 7 }), 'app'],
      ['client missing', ({ app }) => ({ app }), 'client'],
      ['client not an object', (b) => ({ ...b, client: 'x' }), 'client'],
      ['unknown top-level property', (b) => ({ ...b, extra: true }), 'extra'],
      [
        'unknown client property',
        (b) => ({ ...b, client: { ...b.client, scope: 'x' } }),
        'client.scope',
      ],
      [
        'issuer missing',
        (b) => ({ ...b, client: { ...b.client, issuer: undefined } }),
        'client.issuer',
      ],
      ['issuer empty', (b) => ({ ...b, client: { ...b.client, issuer: '' } }), 'client.issuer'],
      [
        'issuer 4097',
        (b) => ({ ...b, client: { ...b.client, issuer: long(4097) } }),
        'client.issuer',
      ],
      [
        'issuer with CR',
        (b) => ({ ...b, client: { ...b.client, issuer: `https://a${CR}b` } }),
        'client.issuer',
      ],
      [
        'issuer with LF',
        (b) => ({ ...b, client: { ...b.client, issuer: `https://a${LF}b` } }),
        'client.issuer',
      ],
      [
        'issuer with NUL',
        (b) => ({ ...b, client: { ...b.client, issuer: `https://a${NUL}b` } }),
        'client.issuer',
      ],
      [
        'clientId empty',
        (b) => ({ ...b, client: { ...b.client, clientId: '' } }),
        'client.clientId',
      ],
      [
        'clientId 4097',
        (b) => ({ ...b, client: { ...b.client, clientId: long(4097) } }),
        'client.clientId',
      ],
      [
        'clientId with CR',
        (b) => ({ ...b, client: { ...b.client, clientId: `a${CR}` } }),
        'client.clientId',
      ],
      [
        'clientId with LF',
        (b) => ({ ...b, client: { ...b.client, clientId: `a${LF}` } }),
        'client.clientId',
      ],
      [
        'clientId with NUL',
        (b) => ({ ...b, client: { ...b.client, clientId: `a${NUL}` } }),
        'client.clientId',
      ],
      [
        'clientId a lone surrogate',
        (b) => ({ ...b, client: { ...b.client, clientId: 'a\ud800' } }),
        'client.clientId',
      ],
      [
        'clientSecret empty',
        (b) => ({ ...b, client: { ...b.client, clientSecret: '' } }),
        'client.clientSecret',
      ],
      [
        'clientSecret 4097',
        (b) => ({ ...b, client: { ...b.client, clientSecret: long(4097, 's') } }),
        'client.clientSecret',
      ],
      [
        'clientSecret with CR',
        (b) => ({ ...b, client: { ...b.client, clientSecret: `${b.client.clientSecret}${CR}` } }),
        'client.clientSecret',
      ],
      [
        'clientSecret with LF',
        (b) => ({ ...b, client: { ...b.client, clientSecret: `${b.client.clientSecret}${LF}` } }),
        'client.clientSecret',
      ],
      [
        'clientSecret with NUL',
        (b) => ({ ...b, client: { ...b.client, clientSecret: `${b.client.clientSecret}${NUL}` } }),
        'client.clientSecret',
      ],
      [
        'clientSecret not a string',
        (b) => ({ ...b, client: { ...b.client, clientSecret: 1234 } }),
        'client.clientSecret',
      ],
      [
        'authMethod missing',
        (b) => ({ ...b, client: { ...b.client, authMethod: undefined } }),
        'client.authMethod',
      ],
      [
        'authMethod unknown',
        (b) => ({ ...b, client: { ...b.client, authMethod: 'private_key_jwt' } }),
        'client.authMethod',
      ],
      [
        'authMethod wrong case',
        (b) => ({ ...b, client: { ...b.client, authMethod: 'NONE' } }),
        'client.authMethod',
      ],
      [
        'source missing',
        (b) => ({ ...b, client: { ...b.client, source: undefined } }),
        'client.source',
      ],
      [
        'source not byo',
        (b) => ({ ...b, client: { ...b.client, source: 'platform' } }),
        'client.source',
      ],
      [
        'client_secret_basic without a secret',
        (b) => ({ ...b, client: { ...b.client, clientSecret: undefined } }),
        'client.clientSecret',
      ],
      [
        'client_secret_post without a secret',
        (b) => ({
          ...b,
          client: { ...b.client, authMethod: 'client_secret_post', clientSecret: undefined },
        }),
        'client.clientSecret',
      ],
      [
        'none with a secret',
        (b) => ({ ...b, client: { ...b.client, authMethod: 'none' } }),
        'client.clientSecret',
      ],
    ]),
  )('refuses %s', async (_name, change, path) => {
    const answer = await call(manager, 'POST', '/v1/mcp-oauth-clients', { body: change(base()) });
    expect(issuePaths(answer)).toEqual([path]);
  });

  it('refuses a missing, non-JSON or non-object body', async () => {
    expect(issuePaths(await call(manager, 'POST', '/v1/mcp-oauth-clients'))).toEqual(['body']);
    expectError(
      await call(manager, 'POST', '/v1/mcp-oauth-clients', { raw: '{"app":' }),
      400,
      'invalid_request',
    );
    expect(issuePaths(await call(manager, 'POST', '/v1/mcp-oauth-clients', { body: [] }))).toEqual([
      'body',
    ]);
  });

  // The app name's limit of 1 to 100 characters is checked first; a name within it must then be
  // a catalog app. Names that are properties of every JavaScript object come in for a lookup done
  // wrong.
  it.each([
    ['an app of 1 character', 'a'],
    ['an app of 100 characters', long(100)],
    ['an app of 100 emoji (characters, not UTF-16 units)', long(100, '🔑')],
    ['__proto__', '__proto__'],
    ['constructor', 'constructor'],
    ['toString', 'toString'],
    ['hasOwnProperty', 'hasOwnProperty'],
    ['a catalog app in another case', 'ACME'],
    ['a catalog app with a space', 'acme '],
    ['an app that is not in the catalog', 'salesforce'],
  ])('refuses %s as an unknown app, naming app and listing the known apps', async (_name, app) => {
    const before = await settings();
    const answer = await call(manager, 'POST', '/v1/mcp-oauth-clients', {
      body: { ...base(), app },
    });
    expect(issuePaths(answer)).toEqual(['app']);
    const known = listApps()
      .map((entry) => entry.id)
      .join(', ');
    expect(answer.body.error).toMatchObject({
      message: `Unknown app "${app}"; known apps: ${known}.`,
      issues: [{ path: 'app', message: `unknown app; known apps: ${known}` }],
    });
    expect(await settings()).toEqual(before);
  });

  it.each([
    ['issuer of 1 character', { client: { issuer: 'i' } }],
    ['issuer of 4096 characters', { client: { issuer: long(4096) } }],
    ['clientId of 1 character', { client: { clientId: 'c' } }],
    ['clientId of 4096 characters', { client: { clientId: long(4096, 'c') } }],
    ['clientSecret of 1 character', { client: { clientSecret: 's' } }],
    ['clientSecret of 4096 characters', { client: { clientSecret: long(4096, 's') } }],
    ['a tab, which the rules allow', { client: { issuer: 'https://a\tb' } }],
  ] as const)('accepts %s', async (_name, change) => {
    const body = base();
    const merged = { ...body, client: { ...body.client, ...change.client } };
    if (merged.client.clientSecret !== body.client.clientSecret) {
      secretsSent.push(merged.client.clientSecret);
    }
    const answer = await call(manager, 'POST', '/v1/mcp-oauth-clients', { body: merged });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({
      app: merged.app,
      issuer: merged.client.issuer,
      clientId: merged.client.clientId,
    });
  });
});

describe('MCP OAuth clients: rotate, retire and select validation', () => {
  let target: ClientOut;

  beforeAll(async () => {
    target = await create({}, 'notion');
  });

  const rotate = (body: unknown) =>
    call(manager, 'POST', `/v1/mcp-oauth-clients/${target.id}/rotate`, { body });

  it.each(
    named<unknown>([
      ['no clientSecret', {}, 'clientSecret'],
      ['only a clientId', { clientId: 'x' }, 'clientSecret'],
      ['clientSecret empty', { clientSecret: '' }, 'clientSecret'],
      ['clientSecret 4097', { clientSecret: long(4097, 's') }, 'clientSecret'],
      ['clientSecret with CR', { clientSecret: `secret-value${CR}` }, 'clientSecret'],
      ['clientSecret with LF', { clientSecret: `secret-value${LF}` }, 'clientSecret'],
      ['clientSecret with NUL', { clientSecret: `secret-value${NUL}` }, 'clientSecret'],
      ['clientSecret null', { clientSecret: null }, 'clientSecret'],
      ['clientId empty', { clientSecret: 'secret-value', clientId: '' }, 'clientId'],
      ['clientId 4097', { clientSecret: 'secret-value', clientId: long(4097) }, 'clientId'],
      ['clientId with CR', { clientSecret: 'secret-value', clientId: `a${CR}` }, 'clientId'],
      ['clientId with LF', { clientSecret: 'secret-value', clientId: `a${LF}` }, 'clientId'],
      ['clientId with NUL', { clientSecret: 'secret-value', clientId: `a${NUL}` }, 'clientId'],
      ['an unknown property', { clientSecret: 'secret-value', authMethod: 'none' }, 'authMethod'],
    ]),
  )('refuses a rotation with %s', async (_name, body, path) => {
    expect(issuePaths(await rotate(body))).toEqual([path]);
  });

  it('accepts rotation values at the limits', async () => {
    const secret = long(4096, 'z');
    secretsSent.push(secret);
    const answer = await rotate({ clientSecret: secret, clientId: long(4096, 'q') });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ clientSecretHint: 'zzzz', clientId: long(4096, 'q') });
    const one = await rotate({ clientSecret: 'y', clientId: 'q' });
    expect(one.body.data).toMatchObject({ clientSecretHint: null, clientId: 'q' });
  });

  it.each([
    ['not a UUID', 'not-a-uuid'],
    ['a version-9 UUID', '018f0e4c-8a7b-9c3d-9e1f-2a3b4c5d6e7f'],
    ['a version-0 UUID that is not nil', '018f0e4c-8a7b-0c3d-9e1f-2a3b4c5d6e7f'],
    ['a UUID with a wrong variant', '018f0e4c-8a7b-7c3d-ce1f-2a3b4c5d6e7f'],
    ['a UUID too long', `${UNKNOWN_UUID}0`],
    ['a UUID without dashes', UNKNOWN_UUID.replace(/-/g, '')],
  ])('refuses a path id that is %s, naming id', async (_name, id) => {
    for (const verb of ['retire', 'select']) {
      expect(
        issuePaths(await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/${verb}`)),
      ).toEqual(['id']);
    }
    expect(
      issuePaths(
        await call(manager, 'POST', `/v1/mcp-oauth-clients/${id}/rotate`, {
          body: { clientSecret: 'secret-value' },
        }),
      ),
    ).toEqual(['id']);
  });

  it.each(['retire', 'select'])(
    '%s takes no body: anything but empty or {} is refused',
    async (verb) => {
      const path = `/v1/mcp-oauth-clients/${target.id}/${verb}`;
      expect(issuePaths(await call(manager, 'POST', path, { body: { force: true } }))).toEqual([
        'force',
      ]);
      expect(issuePaths(await call(manager, 'POST', path, { body: [] }))).toEqual(['body']);
      // Not JSON at all: refused for its media type before the operation sees it.
      expectError(
        await call(manager, 'POST', path, { raw: 'please', contentType: 'text/plain' }),
        415,
        'unsupported_media_type',
      );
      expectError(await call(manager, 'POST', path, { raw: 'null' }), 400, 'invalid_request');
    },
  );

  it('select and retire accept an empty body and {}', async () => {
    const client = await create({}, 'google-calendar');
    for (const options of [{}, { body: {} }, { raw: '' }]) {
      const answer = await call(
        manager,
        'POST',
        `/v1/mcp-oauth-clients/${client.id}/select`,
        options,
      );
      expect(answer.status).toBe(200);
    }
    const retired = await call(manager, 'POST', `/v1/mcp-oauth-clients/${client.id}/retire`, {
      raw: '',
    });
    expect(retired.status).toBe(200);
  });
});

describe('MCP OAuth clients: update_mcp_client_branding validation', () => {
  const put = (body: unknown) => call(manager, 'PUT', '/v1/mcp-client-branding', { body });

  it.each(
    named<unknown>([
      ['client_name missing', { logo_uri: 'https://a' }, 'client_name'],
      ['client_name empty', { client_name: '' }, 'client_name'],
      ['client_name 101 characters', { client_name: long(101) }, 'client_name'],
      ['client_name with a control character (BEL)', { client_name: 'Acme\u0007' }, 'client_name'],
      ['client_name with a tab', { client_name: 'Acme\tAgents' }, 'client_name'],
      ['client_name with DEL', { client_name: 'Acme\u007f' }, 'client_name'],
      ['client_name with CR', { client_name: `Acme${CR}` }, 'client_name'],
      ['client_name with LF', { client_name: `Acme${LF}` }, 'client_name'],
      ['client_name with NUL', { client_name: `Acme${NUL}` }, 'client_name'],
      ['client_name with U+200B', { client_name: 'Ac\u200bme' }, 'client_name'],
      ['client_name with U+FEFF', { client_name: '\ufeffAcme' }, 'client_name'],
      ['client_name with U+202E', { client_name: 'Acme\u202e' }, 'client_name'],
      ['client_name with <', { client_name: '<b>Acme' }, 'client_name'],
      ['client_name with >', { client_name: 'Acme>' }, 'client_name'],
      ['client_name not a string', { client_name: ['Acme'] }, 'client_name'],
      ['an unknown property', { client_name: 'Acme', clientName: 'Acme' }, 'clientName'],
      ...(['logo_uri', 'client_uri', 'policy_uri', 'tos_uri'] as const).flatMap(
        (field): [string, unknown, string][] => [
          [`${field} empty`, { client_name: 'Acme', [field]: '' }, field],
          [`${field} 4097`, { client_name: 'Acme', [field]: long(4097) }, field],
          [`${field} with CR`, { client_name: 'Acme', [field]: `https://a${CR}` }, field],
          [`${field} with LF`, { client_name: 'Acme', [field]: `https://a${LF}` }, field],
          [`${field} with NUL`, { client_name: 'Acme', [field]: `https://a${NUL}` }, field],
          [`${field} null`, { client_name: 'Acme', [field]: null }, field],
        ],
      ),
    ]),
  )('refuses %s', async (_name, body, path) => {
    expect(issuePaths(await put(body))).toEqual([path]);
  });

  it.each([
    ['a one-character name', { client_name: 'A' }],
    ['a 100-character name', { client_name: long(100) }],
    ['a name of 100 emoji', { client_name: long(100, '🤖') }],
    ['a name with accents and punctuation', { client_name: 'Ägents & Co. — “beta”' }],
    [
      'URIs of 1 and 4096 characters',
      { client_name: 'Acme', logo_uri: 'x', client_uri: long(4096), policy_uri: 'p', tos_uri: 't' },
    ],
  ])('accepts %s', async (_name, body) => {
    const answer = await put(body);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject(body);
  });
});

// ---- documents and secrets ----

describe('MCP OAuth clients: OpenAPI and secrets', () => {
  it('describes the six operations with their scopes, write-only secrets and named schemas', async () => {
    const doc = (await (await fetch(`${api.url}/openapi/management.json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const expected = [
      ['/v1/mcp-oauth-clients', 'get', 'get_mcp_oauth_settings', 'auth_configs:read', 'read'],
      [
        '/v1/mcp-oauth-clients',
        'post',
        'create_mcp_oauth_client',
        'auth_configs:manage',
        'proposal',
      ],
      [
        '/v1/mcp-oauth-clients/{id}/rotate',
        'post',
        'rotate_mcp_oauth_client',
        'auth_configs:manage',
        'proposal',
      ],
      [
        '/v1/mcp-oauth-clients/{id}/retire',
        'post',
        'retire_mcp_oauth_client',
        'auth_configs:manage',
        'proposal',
      ],
      [
        '/v1/mcp-oauth-clients/{id}/select',
        'post',
        'select_mcp_oauth_client',
        'auth_configs:manage',
        'proposal',
      ],
      [
        '/v1/mcp-client-branding',
        'put',
        'update_mcp_client_branding',
        'auth_configs:manage',
        'proposal',
      ],
    ] as const;
    for (const [path, method, operationId, scope, mcp] of expected) {
      expect(doc.paths[path]?.[method]).toMatchObject({
        operationId,
        tags: ['Management'],
        'x-service-scopes': [scope],
        'x-service-mcp': mcp,
        'x-service-audience': 'business',
        security: [{ apiKey: [] }, { bearerKey: [] }],
      });
      expect(doc.components.schemas[`${operationId}_output`]).toBeDefined();
    }
    const schemas = doc.components.schemas;
    const client = schemas.create_mcp_oauth_client_input?.properties?.client as {
      properties: Record<string, unknown>;
      additionalProperties: boolean;
    };
    expect(client.additionalProperties).toBe(false);
    expect(client.properties.clientSecret).toMatchObject({
      writeOnly: true,
      minLength: 1,
      maxLength: 4096,
    });
    expect(schemas.rotate_mcp_oauth_client_input?.properties?.clientSecret).toMatchObject({
      writeOnly: true,
    });
    expect(schemas.update_mcp_client_branding_input?.properties?.client_name).toMatchObject({
      minLength: 1,
      maxLength: 100,
    });
    expect(schemas.get_mcp_oauth_settings_output).toBeDefined();
  });

  it('never returned or logged a client secret', () => {
    expect(secretsSent.length).toBeGreaterThan(20);
    const logs = api.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    const bodies = responseTexts.join('\n');
    for (const secret of secretsSent) {
      // Single-character and all-same-letter secrets would match anything; the random ones count.
      if (!secret.startsWith('mcp-secret-')) continue;
      expect(bodies).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
    expect(bodies).not.toMatch(/clientSecret"\s*:/);
  });
});
