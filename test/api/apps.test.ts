import { beforeAll, describe, expect, it } from '@jest/globals';
import { findApp, listActions, listApps } from '../../workflows/catalog/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The catalog as the API shows it, on a deployment that is not on localhost: the redirect URI a
 * newcomer registers at GitHub must be the one the connect flow really sends, built from
 * PUBLIC_URL (its trailing slash dropped), and APP_URLS must show where the flow really goes.
 */
const PUBLIC_URL = 'https://gatehouse.example.test/';
const REDIRECT_URI = 'https://gatehouse.example.test/connect/callback';

let db: TestDatabase;
let api: TestApi;
let reader: TestKey;

interface AppOut {
  app: string;
  name: string;
  auth_kind: string;
  redirect_uri: string;
  authorization_url: string;
  api_base_url: string;
  scopes: { scope: string; grades: string[]; description: string | null; requested: boolean }[];
  actions: { action: string; scope: string; description: string }[];
  auth_config_id: string | null;
  oauth_client: 'auth_config' | 'funded_access' | null;
}

interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  issues?: { path: string; message: string }[];
  [key: string]: unknown;
}

interface Answer<T> {
  status: number;
  body: T & { error: ErrorBody };
}

async function call<T>(
  key: TestKey | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...(key ? bearer(key.key) : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer<T>['body'] };
}

const getApps = (key: TestKey) => call<{ data: AppOut[] }>(key, 'GET', '/v1/apps');
const getApp = (key: TestKey, app: string) => call<AppOut>(key, 'GET', `/v1/apps/${app}`);

/** An environment of its own, with a full business key (auth configs, funded access, links). */
const adminOf = (env: string) =>
  createTestKey(db.sql, { env, access: 'full', audience: 'business', agentId: 'ops' });

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(
    await startTestApi(
      testConfig(db.url, {
        PUBLIC_URL,
        APP_URLS: JSON.stringify({
          linear: { oauth: 'https://linear.sandbox.test/', api: 'https://api.linear.sandbox.test' },
        }),
        PLATFORM_OAUTH_CLIENTS: JSON.stringify({
          slack: { clientId: 'platform-slack', clientSecret: 'platform-slack-secret' },
        }),
      }),
      db.sql,
    ),
  );
  reader = await createTestKey(db.sql, { env: 'catalog', access: 'read_only' });
});

describe('GET /v1/apps', () => {
  it('lists every catalog app with the redirect URI to register, its scopes and its actions', async () => {
    const answer = await getApps(reader);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['data']);
    const apps = answer.body.data;
    expect(apps.map((app) => app.app)).toEqual(listApps().map((app) => app.id));
    for (const app of apps) {
      expect(app.redirect_uri).toBe(REDIRECT_URI);
      expect(app.auth_kind).toBe('oauth2');
      expect(app.actions).toEqual(
        listActions(app.app).map((action) => ({
          action: `${action.app}.${action.name}`,
          scope: action.scope,
          description: action.description,
        })),
      );
      // A fresh environment: nothing can be connected until an auth config exists.
      expect(app).toMatchObject({ auth_config_id: null, oauth_client: null });
    }

    const words = findApp('github')?.oauth.scopeDescriptions ?? {};
    expect(apps.find((app) => app.app === 'github')).toEqual({
      app: 'github',
      name: 'GitHub',
      auth_kind: 'oauth2',
      redirect_uri: REDIRECT_URI,
      authorization_url: 'https://github.com/login/oauth/authorize',
      api_base_url: 'https://api.github.com',
      scopes: [
        {
          scope: 'repo',
          grades: ['read', 'write'],
          description: words.repo ?? null,
          requested: true,
        },
        {
          scope: 'public_repo',
          grades: ['read', 'write'],
          description: words.public_repo ?? null,
          requested: false,
        },
        {
          scope: 'read:user',
          grades: ['read'],
          description: words['read:user'] ?? null,
          requested: false,
        },
      ],
      actions: expect.arrayContaining([
        { action: 'github.list_repos', scope: 'read', description: expect.any(String) },
        { action: 'github.create_issue', scope: 'write', description: expect.any(String) },
        {
          action: 'github.delete_issue_comment',
          scope: 'destructive',
          description: expect.any(String),
        },
      ]),
      auth_config_id: null,
      oauth_client: null,
    });
  });

  it('shows where APP_URLS sends an app, and an app that grants by capability without scopes', async () => {
    const apps = (await getApps(reader)).body.data;
    expect(apps.find((app) => app.app === 'linear')).toMatchObject({
      authorization_url: 'https://linear.sandbox.test/oauth/authorize',
      api_base_url: 'https://api.linear.sandbox.test',
    });
    expect(apps.find((app) => app.app === 'notion')?.scopes).toEqual([]);
  });

  it('refuses a query parameter it does not take', async () => {
    const answer = await call(reader, 'GET', '/v1/apps?app=github');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request' });
    expect(answer.body.error.issues?.map((issue) => issue.path)).toEqual(['app']);
  });
});

describe('GET /v1/apps/{app}', () => {
  it('answers each app as the list shows it', async () => {
    const listed = (await getApps(reader)).body.data;
    for (const app of listed) {
      const answer = await getApp(reader, app.app);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(app);
    }
  });

  it.each(['nope', 'GitHub', '__proto__', 'constructor', 'github.list_repos'])(
    'answers 404 not_found in the error envelope for %s',
    async (name) => {
      const answer = await getApp(reader, encodeURIComponent(name));
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        error: { code: 'not_found', message: `App "${name}" not found`, retryable: false },
      });
    },
  );

  it('refuses an app key over 100 characters naming app', async () => {
    const answer = await getApp(reader, 'a'.repeat(101));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', retryable: false });
    expect(answer.body.error.issues?.map((issue) => issue.path)).toEqual(['app']);
  });
});

describe('connecting GitHub by what the API shows', () => {
  it('names the redirect URI the connect flow sends, from the 409 to the 302 at GitHub', async () => {
    const admin = await adminOf('connecting');
    const link = () =>
      call<{ url: string }>(admin, 'POST', '/v1/connect/links', { user: 'u_gh', app: 'github' });

    // Before any auth config: the refusal says where to look.
    const refused = await link();
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'auth_config_required', app: 'github' });
    expect(refused.body.error.message).toContain('GET /v1/apps/github');
    const before = (await getApp(admin, 'github')).body;
    expect(before).toMatchObject({ oauth_client: null, auth_config_id: null });

    // The client registered at GitHub with that callback, added as an auth config.
    const created = await call<{ data: { id: string; clientId: string; redirect_uri: string } }>(
      admin,
      'POST',
      '/v1/auth-configs',
      {
        app: 'github',
        name: 'GitHub OAuth app',
        clientId: 'Iv1.0123456789abcdef',
        clientSecret: '0123456789abcdef0123456789abcdef01234567',
      },
    );
    expect(created.status).toBe(200);
    expect(created.body.data.redirect_uri).toBe(before.redirect_uri);
    const listed = await call<{ data: { id: string; redirect_uri: string }[] }>(
      admin,
      'GET',
      '/v1/auth-configs',
    );
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: created.body.data.id, redirect_uri: REDIRECT_URI }),
    ]);

    const after = (await getApp(admin, 'github')).body;
    expect(after).toMatchObject({
      auth_config_id: created.body.data.id,
      oauth_client: 'auth_config',
    });
    // Only GitHub: the other apps of the environment still need their own.
    const others = (await getApps(admin)).body.data.filter((app) => app.app !== 'github');
    for (const app of others) expect(app.oauth_client).toBeNull();

    // The user's browser at the start step is sent to GitHub with exactly that redirect URI.
    const made = await link();
    expect(made.status).toBe(201);
    expect(made.body.url.startsWith('https://gatehouse.example.test/connect/')).toBe(true);
    const token = new URL(made.body.url).pathname.split('/').pop() ?? '';
    const started = await fetch(`${api.url}/connect/${token}/start`, { redirect: 'manual' });
    expect(started.status).toBe(302);
    const location = new URL(started.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(after.authorization_url);
    expect(location.searchParams.get('redirect_uri')).toBe(after.redirect_uri);
    expect(location.searchParams.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(location.searchParams.get('client_id')).toBe('Iv1.0123456789abcdef');
    expect(location.searchParams.get('scope')).toBe('repo');

    // Another environment does not see this one's auth config.
    const elsewhere = (await getApp(reader, 'github')).body;
    expect(elsewhere).toMatchObject({ auth_config_id: null, oauth_client: null });
  });

  it("says when funded access stands in with the operator's client, for the apps it has one for", async () => {
    const admin = await adminOf('funded');
    expect((await call(admin, 'PUT', '/v1/funded-access', { enabled: true })).status).toBe(200);
    const apps = (await getApps(admin)).body.data;
    expect(apps.find((app) => app.app === 'slack')).toMatchObject({
      auth_config_id: null,
      oauth_client: 'funded_access',
    });
    expect(apps.find((app) => app.app === 'github')?.oauth_client).toBeNull();
    expect(
      (await call(admin, 'POST', '/v1/connect/links', { user: 'u_slack', app: 'slack' })).status,
    ).toBe(201);
  });
});

describe('access', () => {
  it('lets every default key read the catalog, and needs auth_configs:read', async () => {
    for (const access of ['read_only', 'standard', 'full'] as const) {
      const key = await createTestKey(db.sql, { env: 'catalog', access });
      expect((await getApps(key)).status).toBe(200);
      expect((await getApp(key, 'github')).status).toBe(200);
    }
    const narrow = await createTestKey(db.sql, {
      env: 'catalog',
      access: 'full',
      scopes: ['connect_settings:read'],
    });
    for (const answer of [await getApps(narrow), await getApp(narrow, 'github')]) {
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({
        code: 'insufficient_access',
        required_scope: 'auth_configs:read',
      });
    }
    expect((await call(null, 'GET', '/v1/apps')).status).toBe(401);
    expect((await call(null, 'GET', '/v1/apps/github')).status).toBe(401);
  });
});

describe('the OpenAPI description', () => {
  it('documents both operations under Apps, and the redirect URI of auth configs', async () => {
    const connected = (await (await fetch(`${api.url}/openapi/connected-users.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags?: string[] }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(connected.paths['/v1/apps']?.get).toMatchObject({
      operationId: 'list_apps',
      tags: ['Apps'],
    });
    expect(connected.paths['/v1/apps/{app}']?.get).toMatchObject({
      operationId: 'get_app',
      tags: ['Apps'],
    });
    expect(connected.components.schemas.App?.properties).toHaveProperty('redirect_uri');
    const management = (await (await fetch(`${api.url}/openapi/management.json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(management.components.schemas.create_auth_config_output?.properties).toHaveProperty(
      'redirect_uri',
    );
  });
});
