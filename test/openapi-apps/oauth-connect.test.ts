// An OpenAPI app whose users connect through the OAuth 2.0 flow its document describes: the demo
// app's own document (GET /openapi.json) registered by document_url, its client added as an auth
// config, and a person connecting in Chromium through the real hosted flow and the demo app's
// consent page. Then the tokens: sealed, refreshed at the document's refresh URL through the
// refresh workflow, sent as the user's bearer token by the app's operations (a read; a write held,
// approved and run once; a 401 answered by one refresh), and forgotten on revocation (the document
// names no revocation endpoint).
import { beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { validAccessToken } from '../../activities/connections/access-token.js';
import { readTokens, saveRefreshedTokens } from '../../activities/db/connections.js';
import { findOAuthApp } from '../../activities/oauth/oauth-app.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const APP = 'acme-api';

let stack: ConnectStack;
let browser: Browser;
let authConfigId: string;
let connectionId: string;
/** Decides the approvals of the calling key's calls (four eyes). */
let approver: TestKey;

const started = stopsAfterAll();

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.key.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** Runs an operation of the app as u_carol. */
const run = (action: string, input: Record<string, unknown>) =>
  api('POST', `/v1/actions/${action}/run`, { user: 'u_carol', input });

async function refreshTokenOf(id: string): Promise<string | null> {
  return (await readTokens(stack.db.sql, stack.config.encryption, id))?.refreshToken ?? null;
}

const deps = () => ({ sql: stack.db.sql, config: stack.config, temporal: stack.temporal });

const errorOf = (answer: { body: Record<string, unknown> }) =>
  answer.body.error as { code: string; message: string };

/** What the demo app says of the account a token belongs to. */
async function accountOf(token: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${stack.demo.url}/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json() };
}

interface ConnectionRow {
  id: string;
  status: string;
  authKind: string;
  authConfigId: string | null;
  providerScopes: string[];
  grantedScopes: string[];
  sealedAccess: string | null;
  sealedRefresh: string | null;
}

async function connectionsOf(user: string): Promise<ConnectionRow[]> {
  return stack.db.sql<ConnectionRow[]>`
    select c.id, c.status, c.auth_kind, c.auth_config_id, c.provider_scopes, c.granted_scopes,
      c.access_token_sealed as sealed_access, c.refresh_token_sealed as sealed_refresh
    from connections c join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} and c.app = ${APP}`;
}

/** Through the hosted flow in Chromium, consenting at the demo app as `account`. */
async function connectInBrowser(linkUrl: string, account: string): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(linkUrl);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'Acme Tasks API',
    );
    // The scopes asked for, in the document's words.
    await expect(page.locator('body').textContent()).resolves.toMatch(
      /See your tasks[\s\S]*Create, change and delete your tasks/,
    );
    const start = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/start'));
    await page.getByRole('link', { name: /Continue to Acme Tasks API/ }).click();
    const location = (await start).headers()['location'];
    if (!location) throw new Error('/start did not redirect');
    await page.getByLabel(/user/i).fill(account);
    await page.getByRole('button', { name: /allow/i }).click();
    await page.waitForURL(/\/connect\/callback/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'is connected',
    );
    return new URL(location);
  } finally {
    await context.close();
  }
}

beforeAll(async () => {
  const executablePath = await ensureChromium();
  stack = started.add(await startConnectStack({ env: { MCP_APPS_ALLOW_PRIVATE: 'true' } }));
  browser = started.add(await chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
  const registered = await api('POST', '/v1/openapi-apps', {
    id: APP,
    name: 'Acme Tasks API',
    document_url: `${stack.demo.url}/openapi.json`,
  });
  expect(registered.status).toBe(200);
  approver = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'full',
    agentId: 'approver',
  });
}, 600_000);

describe('an OpenAPI app connected through its document’s OAuth flow', () => {
  it('needs an auth config, which only an app connected through OAuth takes', async () => {
    const early = await createLink(stack, { user: 'u_early', app: APP });
    expect(early.status).toBe(409);
    const { error } = (await early.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('auth_config_required');
    // The redirect URI to register at the app is named: the app has no GET /v1/apps/<id>.
    expect(error.message).toContain(`${stack.config.api.publicUrl}/connect/callback`);

    // An OpenAPI app whose operations need nothing takes no OAuth client.
    const open = await api('POST', '/v1/openapi-apps', {
      id: 'open-api',
      name: 'Open',
      document: {
        openapi: '3.1.0',
        info: { title: 'Open', version: '1' },
        servers: [{ url: stack.demo.url }],
        paths: {
          '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'ok' } } } },
        },
      },
    });
    expect(open.status).toBe(200);
    const refused = await api('POST', '/v1/auth-configs', {
      app: 'open-api',
      name: 'nothing to connect',
      clientId: 'x',
      clientSecret: 'y',
    });
    expect(refused.status).toBe(400);
    expect(errorOf(refused).message).toMatch(/takes no OAuth client: .*connect nothing/);
    const link = await createLink(stack, { user: 'u_early', app: 'open-api' });
    expect(link.status).toBe(409);

    const created = await api('POST', '/v1/auth-configs', {
      app: APP,
      name: 'demo client',
      ...stack.client,
    });
    expect(created.status).toBe(200);
    authConfigId = (created.body.data as { id: string }).id;
  });

  it('connects a person in the browser: PKCE, the operations’ scopes, tokens sealed', async () => {
    const link = await createLink(stack, { user: 'u_carol', app: APP });
    expect(link.status).toBe(201);
    const authorize = await connectInBrowser(((await link.json()) as { url: string }).url, 'carol');

    // The document's authorization URL, with state, S256 PKCE and the scopes its operations name.
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${stack.demo.url}/auth`);
    expect(authorize.searchParams.get('scope')).toBe('tasks:read tasks:write');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('client_id')).toBe(stack.client.clientId);

    const [connection] = await connectionsOf('u_carol');
    expect(connection).toMatchObject({
      status: 'active',
      authKind: 'oauth2',
      authConfigId,
      providerScopes: ['tasks:read', 'tasks:write'],
      grantedScopes: ['read', 'write'],
    });
    // Sealed: what is stored is no token the app takes.
    if (!connection?.sealedAccess || !connection.sealedRefresh) throw new Error('no tokens kept');
    expect((await accountOf(connection.sealedAccess)).status).toBe(401);

    const first = await validAccessToken(deps(), connection.id);
    if (!first.ok) throw new Error(`no token: ${first.status}`);
    expect(await accountOf(first.accessToken)).toEqual({ status: 200, body: { id: 'carol' } });

    // A forced refresh (what a 401 from the app brings) goes through the refresh workflow to the
    // document's refresh URL, with the auth config's client.
    const refreshesBefore = stack.demo.stats().tokenRequests.refresh_token;
    const refreshed = await validAccessToken(deps(), connection.id, { force: true });
    if (!refreshed.ok) throw new Error(`not refreshed: ${refreshed.status}`);
    expect(refreshed.accessToken).not.toBe(first.accessToken);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(refreshesBefore + 1);
    expect(await accountOf(refreshed.accessToken)).toEqual({ status: 200, body: { id: 'carol' } });

    connectionId = connection.id;
  });

  it('calls its operations as the user with the token: a read, and a write once approved', async () => {
    const read = await run('acme-api.list_tasks', {});
    expect(read).toEqual({ status: 200, body: { ok: true, data: { tasks: [] } } });

    const input = { body: { title: 'Water the plants' } };
    const held = await run('acme-api.create_task', input);
    expect([held.status, errorOf(held).code]).toEqual([403, 'approval_required']);
    const approval = (held.body.error as { approval: { id: string } }).approval.id;
    const decided = await fetch(`${stack.api.url}/v1/approvals/${approval}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${approver.key}` },
    });
    expect(decided.status).toBe(200);
    const created = await run('acme-api.create_task', input);
    expect(created.body).toMatchObject({
      ok: true,
      data: { title: 'Water the plants', status: 'open' },
    });
    expect((await run('acme-api.create_task', input)).status).toBe(403);

    // A token the app no longer takes: its 401 brings one refresh, and the call goes through.
    const refreshesBefore = stack.demo.stats().tokenRequests.refresh_token;
    await saveRefreshedTokens(
      stack.db.sql,
      stack.config.encryption,
      connectionId,
      {
        accessToken: 'forgotten-by-the-app',
        refreshToken: await refreshTokenOf(connectionId),
        expiresAt: new Date(Date.now() + 3600_000),
      },
      null,
    );
    const after = await run('acme-api.list_tasks', {});
    expect(after.body).toMatchObject({
      ok: true,
      data: { tasks: [{ title: 'Water the plants' }] },
    });
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(refreshesBefore + 1);
  });

  it('renews the connection in place through a reconnect link', async () => {
    const before = await validAccessToken(deps(), connectionId);
    const link = await api('POST', `/v1/connections/${connectionId}/reconnect-link`);
    expect(link.status).toBe(201);
    await connectInBrowser((link.body as { url: string }).url, 'carol');
    expect(await connectionsOf('u_carol')).toMatchObject([{ id: connectionId, status: 'active' }]);
    const after = await validAccessToken(deps(), connectionId);
    if (!before.ok || !after.ok) throw new Error('no token');
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(await accountOf(after.accessToken)).toEqual({ status: 200, body: { id: 'carol' } });
  });

  it('is revoked here only: the document names no revocation endpoint', async () => {
    const revocationsBefore = stack.demo.stats().revocations;
    const revoked = await api('DELETE', `/v1/connections/${connectionId}`);
    expect(revoked.status).toBe(200);
    expect(await connectionsOf('u_carol')).toMatchObject([
      { status: 'revoked', sealedAccess: null, sealedRefresh: null },
    ]);
    expect(stack.demo.stats().revocations).toBe(revocationsBefore);
    const refused = await run('acme-api.list_tasks', {});
    expect([refused.status, errorOf(refused).code]).toEqual([409, 'connection_required']);
  });

  it('revokes its users’ connections and disables its auth config when the app is deleted', async () => {
    const link = await createLink(stack, { user: 'u_dave', app: APP });
    await connectInBrowser(((await link.json()) as { url: string }).url, 'dave');
    expect(await connectionsOf('u_dave')).toMatchObject([{ status: 'active' }]);

    expect((await api('DELETE', `/v1/openapi-apps/${APP}`)).status).toBe(200);
    // An app registered later under this id may be another service: nothing of these reaches it.
    expect(await connectionsOf('u_dave')).toMatchObject([
      { status: 'revoked', sealedAccess: null, sealedRefresh: null },
    ]);
    const configs = await api('GET', '/v1/auth-configs');
    expect(configs.body.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: authConfigId, status: 'disabled' })]),
    );
  });

  it('refuses an authorization server at a private address unless MCP_APPS_ALLOW_PRIVATE', async () => {
    const registered = await api('POST', '/v1/openapi-apps', {
      id: 'inward',
      name: 'Inward',
      document: {
        openapi: '3.1.0',
        info: { title: 'Inward', version: '1' },
        servers: [{ url: 'https://93.184.215.14' }],
        components: {
          securitySchemes: {
            oauth: {
              type: 'oauth2',
              flows: {
                authorizationCode: {
                  authorizationUrl: 'https://93.184.215.14/authorize',
                  tokenUrl: 'https://10.1.2.3/token',
                  scopes: {},
                },
              },
            },
          },
        },
        security: [{ oauth: [] }],
        paths: { '/x': { get: { operationId: 'x', responses: { '200': { description: 'ok' } } } } },
      },
    });
    expect(registered.status).toBe(200);
    const closed = { ...stack.config, mcpApps: { allowPrivate: false } };
    await expect(
      findOAuthApp(stack.db.sql, closed, stack.environmentId, 'inward'),
    ).resolves.toEqual({
      refused: expect.stringMatching(
        /token URL https:\/\/10\.1\.2\.3\/token must not .*MCP_APPS_ALLOW_PRIVATE=true allows it/,
      ),
    });
    await expect(
      findOAuthApp(stack.db.sql, stack.config, stack.environmentId, 'inward'),
    ).resolves.toMatchObject({
      app: { source: 'openapi', endpoints: { tokenUrl: 'https://10.1.2.3/token' } },
    });
  });
});
