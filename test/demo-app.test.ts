import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as oauth from 'openid-client';
import { z } from 'zod';
import { DEEP_JSON_LEVELS } from '../infra/demo-app/faults.js';
import { startDemoApp, type DemoApp, type DemoClient } from '../infra/demo-app/index.js';
import { consentAtDemoApp } from '../infra/demo-app/scripted-consent.js';
import { freezeDateAt } from './support/frozen-date.js';
import { stopsAfterAll } from './support/stops.js';

// Nothing listens on port 9: the flow stops at the redirect and reads its Location header.
const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';
const CLIENT: DemoClient = {
  clientId: 'gatehouse-test',
  clientSecret: 'test-only-secret',
  redirectUris: [REDIRECT_URI],
};
const ALL_SCOPES = 'tasks:read tasks:write offline_access';

type Tokens = oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers;

/** Just enough of a browser cookie store for one origin. */
function discover(app: DemoApp, client: DemoClient = CLIENT): Promise<oauth.Configuration> {
  return oauth.discovery(new URL(app.url), client.clientId, client.clientSecret, undefined, {
    // Deprecated only as a warning sign; the demo app is plain http on loopback by design.
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    execute: [oauth.allowInsecureRequests],
  });
}

interface FlowOptions {
  username?: string;
  decision?: 'allow' | 'deny';
  scope?: string;
  prompt?: string;
  /** Called with each interaction page's HTML. */
  onPage?: (html: string) => void;
}

interface FlowResult {
  callbackUrl: URL;
  verifier: string;
  state: string;
}

/** The browser's part: authorize → consent page → POST the form → redirect to the client. */
async function authorize(config: oauth.Configuration, options: FlowOptions): Promise<FlowResult> {
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const url = oauth.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: options.scope ?? ALL_SCOPES,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
  });
  const callbackUrl = await consentAtDemoApp(
    url,
    (next) => next.href.startsWith(REDIRECT_URI),
    options,
  );
  return { callbackUrl, verifier, state };
}

async function connect(app: DemoApp, options: FlowOptions = {}): Promise<Tokens> {
  const config = await discover(app);
  const { callbackUrl, verifier, state } = await authorize(config, options);
  return oauth.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
}

function refreshTokenOf(tokens: Tokens): string {
  if (tokens.refresh_token === undefined) throw new Error('no refresh token issued');
  return tokens.refresh_token;
}

interface ApiResult {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(app: DemoApp, path: string, init: RequestInit = {}): Promise<ApiResult> {
  const res = await fetch(new URL(path, app.url), init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

function api(
  app: DemoApp,
  token: string,
  path: string,
  method = 'GET',
  body?: unknown,
): Promise<ApiResult> {
  return call(app, path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function admin(app: DemoApp, path: string, body?: unknown): Promise<ApiResult> {
  return call(app, `/__admin${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
}

const taskSchema = z.object({ id: z.string(), title: z.string(), status: z.string() });

describe('demo app (Acme Tasks)', () => {
  let app: DemoApp;

  const started = stopsAfterAll();
  beforeAll(async () => {
    app = started.add(await startDemoApp({ clients: [CLIENT] }));
  });

  afterEach(() => {
    app.faults.reset();
  });

  it('publishes OAuth metadata for plain OAuth 2.0 clients', async () => {
    const { body } = await call(app, '/.well-known/openid-configuration');
    expect(body).toMatchObject({
      issuer: app.url,
      token_endpoint: `${app.url}/token`,
      revocation_endpoint: `${app.url}/token/revocation`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      scopes_supported: expect.arrayContaining(['tasks:read', 'tasks:write', 'offline_access']),
    });
    expect((await call(app, '/.well-known/oauth-authorization-server')).body).toEqual(body);
  });

  it('runs the code flow with PKCE and serves the tasks API to the token', async () => {
    const pages: string[] = [];
    const tokens = await connect(app, { username: 'alice', onPage: (html) => pages.push(html) });
    expect(pages).toHaveLength(1);
    expect(pages[0]).toContain('<h1>Acme Tasks</h1>');
    expect(pages[0]).toContain('<label for="username">Username</label>');
    expect(pages[0]).toMatch(/<button type="submit" name="decision" value="deny"/);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBeGreaterThan(3500);
    // oidc-provider drops offline_access unless prompt=consent; the refresh token comes anyway.
    expect(tokens.scope?.split(' ').sort()).toEqual(['tasks:read', 'tasks:write']);
    expect(tokens.refresh_token).toEqual(expect.any(String));

    const token = tokens.access_token;
    expect((await api(app, token, '/me')).body).toEqual({ id: 'alice' });
    const created = await api(app, token, '/tasks', 'POST', { title: 'Write tests', notes: 'x' });
    expect(created.status).toBe(201);
    const task = taskSchema.parse(created.body);
    expect(task).toMatchObject({ title: 'Write tests', status: 'open' });
    expect(task.id).toMatch(/^t_/);

    const patched = await api(app, token, `/tasks/${task.id}`, 'PATCH', { status: 'done' });
    expect(patched.body).toMatchObject({ id: task.id, status: 'done', notes: 'x' });
    expect((await api(app, token, '/tasks?status=done')).body).toEqual({ tasks: [patched.body] });
    expect((await api(app, token, '/tasks?status=open')).body).toEqual({ tasks: [] });
    expect((await api(app, token, `/tasks/${task.id}`)).body).toEqual(patched.body);

    const invalid = await api(app, token, '/tasks', 'POST', { title: '' });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ error: 'validation_failed', details: expect.any(Array) });
    expect((await api(app, token, `/tasks/${task.id}`, 'PATCH', { status: 'x' })).status).toBe(422);

    // Tasks belong to the account: bob sees none of alice's.
    const bob = (await connect(app, { username: 'bob' })).access_token;
    expect((await api(app, bob, '/tasks')).body).toEqual({ tasks: [] });
    expect((await api(app, bob, `/tasks/${task.id}`)).status).toBe(404);
    expect((await api(app, bob, `/tasks/${task.id}`, 'DELETE')).status).toBe(404);

    expect((await api(app, token, `/tasks/${task.id}`, 'DELETE')).status).toBe(204);
    expect((await api(app, token, `/tasks/${task.id}`)).body).toEqual({ error: 'not_found' });
  });

  it('rejects missing or unknown tokens with 401 and WWW-Authenticate', async () => {
    for (const res of [await call(app, '/tasks'), await api(app, 'not-a-token', '/me')]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
      expect(res.body).toEqual({ error: 'invalid_token' });
    }
  });

  it('enforces scopes and still issues a refresh token without offline_access', async () => {
    const tokens = await connect(app, { username: 'reader', scope: 'tasks:read' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect((await api(app, tokens.access_token, '/tasks')).status).toBe(200);
    const write = await api(app, tokens.access_token, '/tasks', 'POST', { title: 'nope' });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ error: 'insufficient_scope' });

    const consented = await connect(app, { scope: ALL_SCOPES, prompt: 'consent' });
    expect(consented.scope?.split(' ')).toContain('offline_access');
  });

  it('issues a verifiable ID token when openid is requested', async () => {
    const tokens = await connect(app, { username: 'oidc-user', scope: 'openid tasks:read' });
    expect(tokens.claims()?.sub).toBe('oidc-user');
  });

  it('returns error=access_denied to the client when the user denies', async () => {
    const config = await discover(app);
    const { callbackUrl, state } = await authorize(config, { decision: 'deny' });
    expect(callbackUrl.searchParams.get('error')).toBe('access_denied');
    expect(callbackUrl.searchParams.get('state')).toBe(state);
    expect(callbackUrl.searchParams.has('code')).toBe(false);
  });

  it('rotates refresh tokens; reusing an old one is invalid_grant', async () => {
    const config = await discover(app);
    const first = await connect(app, { username: 'rotator' });
    const second = await oauth.refreshTokenGrant(config, refreshTokenOf(first));
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.scope?.split(' ')).toContain('tasks:write');
    expect((await api(app, second.access_token, '/me')).body).toEqual({ id: 'rotator' });

    await expect(oauth.refreshTokenGrant(config, refreshTokenOf(first))).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // Reuse of a rotated token is treated as theft: the whole grant is revoked.
    await expect(oauth.refreshTokenGrant(config, refreshTokenOf(second))).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('revoke-grant kills the account’s refresh and access tokens', async () => {
    const config = await discover(app);
    const tokens = await connect(app, { username: 'carol' });
    const revoked = await admin(app, '/revoke-grant', { account: 'carol' });
    expect(revoked.body).toEqual({ revokedGrants: 1 });
    expect((await api(app, tokens.access_token, '/me')).status).toBe(401);
    await expect(oauth.refreshTokenGrant(config, refreshTokenOf(tokens))).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // The user can connect again afterwards.
    expect((await connect(app, { username: 'carol' })).access_token).toEqual(expect.any(String));
  });

  it('supports RFC 7009 revocation of a refresh token', async () => {
    const config = await discover(app);
    const tokens = await connect(app, { username: 'dave' });
    await oauth.tokenRevocation(config, refreshTokenOf(tokens));
    await expect(oauth.refreshTokenGrant(config, refreshTokenOf(tokens))).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect((await api(app, tokens.access_token, '/me')).status).toBe(401);
  });

  it('answers faults on the API only, counting down `times`', async () => {
    const config = await discover(app);
    const tokens = await connect(app, { username: 'erin' });
    const token = tokens.access_token;

    await admin(app, '/faults', { mode: 'rate_limit', retryAfterSeconds: 7, times: 2 });
    for (let i = 0; i < 2; i += 1) {
      const limited = await api(app, token, '/tasks');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
    }
    expect((await api(app, token, '/tasks')).status).toBe(200);

    await admin(app, '/faults', { mode: 'unavailable', retryAfterSeconds: 3 });
    const down = await api(app, token, '/me');
    expect(down).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    expect(down.headers.get('retry-after')).toBe('3');
    expect((await api(app, token, '/me')).status).toBe(503);
    // The OAuth endpoints keep working while the API is down.
    const refreshed = await oauth.refreshTokenGrant(config, refreshTokenOf(tokens));
    expect((await call(app, '/__admin/faults', { method: 'DELETE' })).status).toBe(204);
    expect((await api(app, refreshed.access_token, '/me')).status).toBe(200);

    app.faults.set({ mode: 'bad_request', times: 1 });
    const bad = await api(app, token, '/tasks');
    expect(bad).toMatchObject({ status: 400, body: { error: 'bad_request' } });
    expect(app.faults.current().mode).toBe('none');

    await admin(app, '/faults', { mode: 'slow', delayMs: 300, times: 1 });
    const started = Date.now();
    const slow = await api(app, refreshed.access_token, '/me');
    expect(slow.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);

    expect((await admin(app, '/faults', { mode: 'explode' })).status).toBe(422);
  });

  it('serves a request under nul_and_surrogate, answering with a NUL and a lone surrogate in titles', async () => {
    const tokens = await connect(app, { username: 'grace' });
    const token = tokens.access_token;
    await admin(app, '/faults', { mode: 'nul_and_surrogate', times: 2 });

    const created = await fetch(new URL('/tasks', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Plain' }),
    });
    expect(created.status).toBe(201);
    // JSON escapes both: the bytes are valid JSON (and ASCII here), which Postgres still refuses.
    const text = await created.text();
    expect(text).toContain('"title":"Plain \\u0000 \\ud83d"');
    const task = taskSchema.parse(JSON.parse(text));
    expect(task.title).toBe('Plain \u0000 \ud83d');

    const listed = await api(app, token, '/tasks');
    expect(z.object({ tasks: z.array(taskSchema) }).parse(listed.body).tasks).toEqual([
      expect.objectContaining({ id: task.id, title: 'Plain \u0000 \ud83d' }),
    ]);
    // Only the answers were hostile: the task was stored as sent.
    expect(app.faults.current().mode).toBe('none');
    expect(taskSchema.parse((await api(app, token, `/tasks/${task.id}`)).body).title).toBe('Plain');
  });

  it('serves a request under deep_json, answering with JSON nested DEEP_JSON_LEVELS deep', async () => {
    const tokens = await connect(app, { username: 'heidi' });
    await admin(app, '/faults', { mode: 'deep_json', times: 1 });
    const res = await fetch(new URL('/tasks', app.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ title: 'Deep' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).toBe('['.repeat(DEEP_JSON_LEVELS) + ']'.repeat(DEEP_JSON_LEVELS));
    const listed = await api(app, tokens.access_token, '/tasks');
    expect(z.object({ tasks: z.array(taskSchema) }).parse(listed.body).tasks).toEqual([
      expect.objectContaining({ title: 'Deep' }),
    ]);
  });

  it('counts token endpoint requests by grant type, revocations and API calls', async () => {
    const config = await discover(app);
    expect((await admin(app, '/stats/reset')).status).toBe(204);
    const tokens = await connect(app, { username: 'frank' });
    const refreshed = await oauth.refreshTokenGrant(config, refreshTokenOf(tokens));
    await expect(oauth.refreshTokenGrant(config, 'garbage')).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    await api(app, refreshed.access_token, '/me');
    await api(app, refreshed.access_token, '/tasks');
    await oauth.tokenRevocation(config, refreshTokenOf(refreshed));

    const expected = {
      tokenRequests: { authorization_code: 1, refresh_token: 2 },
      revocations: 1,
      apiRequests: 2,
    };
    expect((await call(app, '/__admin/stats')).body).toEqual(expected);
    expect(app.stats()).toEqual(expected);
    app.resetStats();
    expect(app.stats().apiRequests).toBe(0);
  });

  it("remembers the last API request's method, path, query and headers, never its token", async () => {
    const tokens = await connect(app, { username: 'hana' });
    const listed = await call(app, '/tasks?status=open&x=%2F', {
      headers: { authorization: `Bearer ${tokens.access_token}`, 'X-Custom': 'one' },
    });
    expect(listed.status).toBe(200);
    const last = (await call(app, '/__admin/last-request')).body as Record<string, unknown>;
    expect(last).toMatchObject({
      method: 'GET',
      path: '/tasks',
      query: 'status=open&x=%2F',
      headers: { 'x-custom': 'one' },
    });
    expect(last.headers).not.toHaveProperty('authorization');
    expect(JSON.stringify(last)).not.toContain(tokens.access_token);

    await api(app, tokens.access_token, '/tasks/t%2Fx', 'DELETE');
    expect((await call(app, '/__admin/last-request')).body).toMatchObject({
      method: 'DELETE',
      path: '/tasks/t%2Fx',
      query: null,
    });
  });

  it('registers and replaces clients at runtime', async () => {
    const second: DemoClient = { ...CLIENT, clientId: 'second-app', clientSecret: 'one' };
    await app.registerClient(second);
    const config = await discover(app, second);
    const { callbackUrl, verifier, state } = await authorize(config, { username: 'gina' });
    const tokens = await oauth.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });

    const replaced = await admin(app, '/clients', { ...second, clientSecret: 'two' });
    expect(replaced.status).toBe(204);
    await expect(oauth.refreshTokenGrant(config, refreshTokenOf(tokens))).rejects.toMatchObject({
      error: 'invalid_client',
    });
    const newConfig = await discover(app, { ...second, clientSecret: 'two' });
    await expect(oauth.refreshTokenGrant(newConfig, refreshTokenOf(tokens))).resolves.toEqual(
      expect.objectContaining({ access_token: expect.any(String) }),
    );
  });
});

describe('demo app with a short access-token TTL', () => {
  it('answers 401 once the access token has expired, and refresh recovers', async () => {
    // The app runs in this process on the test's clock (jest fakes Date only): the fresh token
    // is used before it lapses and after, whatever the machine's speed, with no wait.
    const issuedAt = Date.now();
    freezeDateAt(issuedAt);
    const app = await startDemoApp({ clients: [CLIENT], accessTokenTtlSeconds: 3 });
    try {
      const tokens = await connect(app, { username: 'tina' });
      expect(tokens.expires_in).toBe(3);
      expect((await api(app, tokens.access_token, '/me')).status).toBe(200);
      // Expiry is counted in whole seconds: a second more than the lifetime is past it.
      jest.setSystemTime(issuedAt + 4000);
      expect((await api(app, tokens.access_token, '/me')).status).toBe(401);
      const refreshed = await oauth.refreshTokenGrant(await discover(app), refreshTokenOf(tokens));
      expect((await api(app, refreshed.access_token, '/me')).status).toBe(200);

      expect((await admin(app, '/token-ttl', { accessTokenTtlSeconds: 600 })).status).toBe(200);
      const longer = await oauth.refreshTokenGrant(await discover(app), refreshTokenOf(refreshed));
      expect(longer.expires_in).toBe(600);
    } finally {
      await app.stop();
      jest.useRealTimers();
    }
  });
});

describe('demo app answering a chosen expires_in', () => {
  it('sends it verbatim in token answers until reset; the tokens live as long as ever', async () => {
    const app = await startDemoApp({ clients: [CLIENT] });
    try {
      expect((await admin(app, '/token-expires-in', { expiresIn: '1e308' })).status).toBe(200);
      const tokens = await connect(app, { username: 'ezra' });
      expect(tokens.expires_in).toBe(1e308);
      expect((await api(app, tokens.access_token, '/me')).status).toBe(200);
      const refreshed = await oauth.refreshTokenGrant(await discover(app), refreshTokenOf(tokens));
      expect(refreshed.expires_in).toBe(1e308);

      expect((await admin(app, '/token-expires-in', { expiresIn: '{' })).status).toBe(422);
      const reset = await call(app, '/__admin/token-expires-in', { method: 'DELETE' });
      expect(reset.status).toBe(204);
      const truthful = await oauth.refreshTokenGrant(
        await discover(app),
        refreshTokenOf(refreshed),
      );
      expect(truthful.expires_in).toBeGreaterThan(3500);
      expect(truthful.expires_in).toBeLessThanOrEqual(3600);
    } finally {
      await app.stop();
    }
  });
});

/**
 * An HTTP server on a free port that outlives the demo apps served on it: their stop, which
 * closes the server it is given, drops their connections and requests but leaves the port bound.
 * The app started again on it has the same issuer (the port is in it), and no other program can
 * have taken the port in between, as it could a port closed and bound again. `release` closes it.
 */
class HeldServer extends http.Server {
  override close(callback?: (error?: Error) => void): this {
    this.removeAllListeners('request');
    this.closeAllConnections();
    callback?.();
    return this;
  }

  release(): Promise<void> {
    return new Promise((resolve) => {
      super.close(() => {
        resolve();
      });
    });
  }
}

describe('demo app with a data directory', () => {
  let dataDir: string;

  const started = stopsAfterAll();
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'demo-app-'));
    started.push(() => rm(dataDir, { recursive: true, force: true }));
  });

  it('keeps grants, tokens and tasks across a restart', async () => {
    const held = new HeldServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    started.push(() => held.release());
    const first = await startDemoApp({ clients: [CLIENT], dataDir, server: held });
    let tokens: Tokens;
    try {
      tokens = await connect(first, { username: 'persistent' });
      await api(first, tokens.access_token, '/tasks', 'POST', { title: 'Survive a restart' });
    } finally {
      await first.stop();
    }

    const second = await startDemoApp({ clients: [CLIENT], dataDir, server: held });
    try {
      expect(second.url).toBe(first.url);
      const config = await discover(second);
      // The access token from before the restart is still valid, as is the refresh token.
      expect((await api(second, tokens.access_token, '/me')).body).toEqual({ id: 'persistent' });
      const refreshed = await oauth.refreshTokenGrant(config, refreshTokenOf(tokens));
      const list = await api(second, refreshed.access_token, '/tasks');
      expect(list.body).toMatchObject({ tasks: [{ title: 'Survive a restart' }] });
    } finally {
      await second.stop();
    }
  });
});
