import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { consumeLink, findLinkByToken } from '../../activities/db/connect-links.js';
import { reconnectLinkFor } from '../../api/connect/links.js';
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
let standard: TestKey;
let readOnly: TestKey;
let otherEnv: TestKey;
/** Every token string a connection of this file ever had: none may leak. */
const secrets: string[] = [];
/** The workflows the calls of this file ran. */
const workflowIds = new Set<string>();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Body = Record<string, unknown> & {
  error?: { code: string; retryable: boolean; reconnect_url?: string; issues?: { path: string }[] };
};

interface Answer {
  status: number;
  headers: Headers;
  body: Body;
}

async function call(
  key: TestKey,
  path: string,
  init: { method?: string; body?: string; type?: string } = {},
): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...bearer(key.key), ...(init.type ? { 'content-type': init.type } : {}) },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Body,
  };
}

const post = (key: TestKey, path: string) => call(key, path, { method: 'POST' });

async function seed(externalId: string) {
  const seeded = await acme.connect({ environmentId: full.environmentId, externalId });
  secrets.push(seeded.accessToken, seeded.refreshToken);
  return { ...seeded, path: `/v1/connections/${seeded.connection.id}` };
}

async function exportTokens(path: string) {
  const answer = await call(full, `${path}/export`);
  expect(answer.status).toBe(200);
  const { access_token: access, refresh_token: refresh } = answer.body;
  if (typeof access !== 'string' || typeof refresh !== 'string') throw new Error('no tokens');
  secrets.push(access, refresh);
  return { answer, access, refresh };
}

async function tasksStatus(token: string): Promise<number> {
  const response = await fetch(`${acme.demo.url}/tasks`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return response.status;
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  acme = started.add(await startAcmeFixture(db.sql, db.url));
  started.add(await startTestWorker(acme.config, db.sql));
  api = started.add(await startTestApi(acme.config, db.sql));
  full = await createTestKey(db.sql, { access: 'full' });
  standard = await createTestKey(db.sql, { access: 'standard' });
  readOnly = await createTestKey(db.sql, { access: 'read_only' });
  otherEnv = await createTestKey(db.sql, { env: 'other', access: 'full' });
});

describe('GET /v1/connections/{id}', () => {
  it('answers exactly the single-connection fields', async () => {
    const { connection, user, path } = await seed('gina');
    const answer = await call(readOnly, path);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: connection.id,
      connected_user_id: user.id,
      app: 'acme',
      status: 'active',
      auth_kind: 'oauth2',
      granted_scopes: ['read', 'write'],
      access_token_expires_at: connection.accessTokenExpiresAt?.toISOString(),
      last_refreshed_at: null,
      refresh_count: 0,
    });
    expect(answer.body.access_token_expires_at).toMatch(ISO);
  });

  it.each([
    ['a non-UUID id', () => '/v1/connections/not-a-uuid'],
    ['an unknown id', () => `/v1/connections/${randomUUID()}`],
  ])('answers 404 not_found for %s, on every route', async (_what, path) => {
    const routes = [
      call(full, path()),
      call(full, path(), { method: 'DELETE' }),
      call(full, `${path()}/export`),
      post(full, `${path()}/refresh`),
      post(full, `${path()}/reconnect-link`),
    ];
    for (const answer of await Promise.all(routes)) {
      expect(answer.status).toBe(404);
      expect(answer.body.error?.code).toBe('not_found');
    }
  });

  it('answers 404 to a key of another environment, on every route', async () => {
    const { path } = await seed('hank');
    for (const answer of [
      await call(otherEnv, path),
      await call(otherEnv, path, { method: 'DELETE' }),
      await call(otherEnv, `${path}/export`),
      await post(otherEnv, `${path}/refresh`),
      await post(otherEnv, `${path}/reconnect-link`),
    ]) {
      expect(answer.status).toBe(404);
    }
    expect((await call(full, path)).body.status).toBe('active');
  });
});

describe('GET /v1/connections/{id}/export', () => {
  it('is refused to standard and read-only keys', async () => {
    const { path } = await seed('ivy');
    for (const key of [standard, readOnly]) {
      const answer = await call(key, `${path}/export`);
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 'insufficient_access' });
    }
  });

  it('hands a full key the tokens, uncached, and they work at the app', async () => {
    const seeded = await seed('jack');
    const { answer, access, refresh } = await exportTokens(seeded.path);
    expect(answer.body).toEqual({
      id: seeded.connection.id,
      app: 'acme',
      auth_kind: 'oauth2',
      access_token: seeded.accessToken,
      refresh_token: seeded.refreshToken,
      expires_at: seeded.connection.accessTokenExpiresAt?.toISOString(),
    });
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(refresh).toBe(seeded.refreshToken);
    expect(await tasksStatus(access)).toBe(200);
  });

  it('refreshes first when the access token expires within 60 s', async () => {
    acme.demo.setAccessTokenTtl(30);
    const seeded = await seed('kate');
    acme.demo.setAccessTokenTtl(3600);
    workflowIds.add(`refresh/${seeded.connection.id}`);

    const { answer, access, refresh } = await exportTokens(seeded.path);
    expect(access).not.toBe(seeded.accessToken);
    expect(refresh).not.toBe(seeded.refreshToken);
    expect(Date.parse(String(answer.body.expires_at)) - Date.now()).toBeGreaterThan(3000_000);
    expect(await tasksStatus(access)).toBe(200);
    expect((await call(full, seeded.path)).body).toMatchObject({ refresh_count: 1 });
  });
});

describe('POST /v1/connections/{id}/refresh', () => {
  it('refreshes now: one token request, counters updated, refresh token rotated', async () => {
    const seeded = await seed('liam');
    workflowIds.add(`refresh/${seeded.connection.id}`);
    acme.demo.resetStats();

    const answer = await post(standard, `${seeded.path}/refresh`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: seeded.connection.id,
      status: 'active',
      last_refreshed_at: expect.stringMatching(ISO),
    });
    expect(acme.demo.stats().tokenRequests.refresh_token).toBe(1);
    const after = await call(full, seeded.path);
    expect(after.body).toMatchObject({
      refresh_count: 1,
      last_refreshed_at: answer.body.last_refreshed_at,
    });
    const exported = await exportTokens(seeded.path);
    expect(exported.refresh).not.toBe(seeded.refreshToken);
    expect(exported.access).not.toBe(seeded.accessToken);
    expect(await tasksStatus(exported.access)).toBe(200);
    // A second forced refresh is another token request: it is not served by the first.
    expect((await post(full, `${seeded.path}/refresh`)).status).toBe(200);
    expect((await call(full, seeded.path)).body.refresh_count).toBe(2);
    expect(await tasksStatus((await exportTokens(seeded.path)).access)).toBe(200);
  });

  it('shares one token request among 20 concurrent callers', async () => {
    const seeded = await seed('mona');
    workflowIds.add(`refresh/${seeded.connection.id}`);
    acme.demo.resetStats();

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(full, `${seeded.path}/refresh`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((answer) => answer.body.last_refreshed_at)).size).toBe(1);
    expect(acme.demo.stats().tokenRequests.refresh_token).toBe(1);
    expect((await call(full, seeded.path)).body.refresh_count).toBe(1);
  });

  it('refuses a body and a read-only key', async () => {
    const { path } = await seed('nina');
    const refresh = `${path}/refresh`;
    const json = await call(full, refresh, {
      method: 'POST',
      body: '{"force":true}',
      type: 'application/json',
    });
    expect(json.status).toBe(400);
    expect(json.body.error?.issues?.map((issue) => issue.path)).toEqual(['force']);
    // A body that is not JSON is refused for its media type before the operation sees it.
    const text = await call(full, refresh, { method: 'POST', body: 'now', type: 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.body.error?.code).toBe('unsupported_media_type');
    expect((await post(readOnly, refresh)).body.error?.code).toBe('insufficient_access');
    expect((await call(full, path)).body.refresh_count).toBe(0);
  });

  it('answers connection_expired with a reconnect URL once the app revoked the grant', async () => {
    const seeded = await seed('oscar');
    workflowIds.add(`refresh/${seeded.connection.id}`);
    expect(await acme.demo.revokeGrants(seeded.account)).toBe(1);

    const answer = await post(full, `${seeded.path}/refresh`);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatchObject({ code: 'connection_expired', retryable: false });
    const url = answer.body.error?.reconnect_url;
    expect(url).toMatch(new RegExp(`^${acme.config.api.publicUrl}/connect/[\\w-]+$`));
    expect((await call(full, seeded.path)).body.status).toBe('expired');
    // Every way in answers the same until the user reconnects through that one link.
    expect((await post(full, `${seeded.path}/refresh`)).body.error?.reconnect_url).toBe(url);
    expect((await call(full, `${seeded.path}/export`)).body.error).toMatchObject({
      code: 'connection_expired',
      reconnect_url: url,
    });
    const link = await post(full, `${seeded.path}/reconnect-link`);
    expect(link).toMatchObject({ status: 201, body: { url } });
  });
});

describe('POST /v1/connections/{id}/reconnect-link', () => {
  it('hands out the same single-use link until it is used, valid 7 days', async () => {
    const { path } = await seed('pia');
    const first = await post(standard, `${path}/reconnect-link`);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ url: expect.any(String), expires_at: expect.stringMatching(ISO) });
    const week = Date.now() + 7 * 24 * 3600_000;
    expect(Math.abs(Date.parse(String(first.body.expires_at)) - week)).toBeLessThan(60_000);
    expect(await post(standard, `${path}/reconnect-link`)).toMatchObject({ body: first.body });

    const token = new URL(String(first.body.url)).pathname.split('/').at(-1) ?? '';
    const link = await findLinkByToken(db.sql, token);
    expect(link?.purpose).toBe('reconnect');
    expect(await consumeLink(db.sql, link?.id ?? '')).toBe(true);
    const next = await post(standard, `${path}/reconnect-link`);
    expect(next.status).toBe(201);
    expect(next.body.url).not.toBe(first.body.url);
  });

  it('gives concurrent askers one and the same link', async () => {
    const { path, connection } = await seed('rosa');
    // Straight at the function as well as over HTTP: the tightest overlap there can be.
    const direct = await Promise.all(
      Array.from({ length: 20 }, () => reconnectLinkFor(db.sql, acme.config, connection)),
    );
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(standard, `${path}/reconnect-link`)),
    );
    const urls = new Set([...direct.map((link) => link.url), ...answers.map((a) => a.body.url)]);
    expect(urls.size).toBe(1);
    const [count] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from connect_links where connection_id = ${connection.id}`;
    expect(count?.n).toBe(1);
  });

  it('refuses a body and a read-only key', async () => {
    const { path } = await seed('quinn');
    const json = await call(full, `${path}/reconnect-link`, {
      method: 'POST',
      body: '{"redirect_url":"https://example.com"}',
      type: 'application/json',
    });
    expect(json.status).toBe(400);
    expect((await post(readOnly, `${path}/reconnect-link`)).status).toBe(403);
  });
});

describe('DELETE /v1/connections/{id}', () => {
  it('is refused to a read-only key', async () => {
    const { path } = await seed('rosa');
    const answer = await call(readOnly, path, { method: 'DELETE' });
    expect(answer.status).toBe(403);
    expect(answer.body.error?.code).toBe('insufficient_access');
    expect((await call(full, path)).body.status).toBe('active');
  });

  it('revokes at the app too, idempotently; the revoked connection refuses everything', async () => {
    const seeded = await seed('sam');
    workflowIds.add(`revoke/${seeded.connection.id}`);
    acme.demo.resetStats();

    const answer = await call(standard, seeded.path, { method: 'DELETE' });
    expect(answer).toMatchObject({
      status: 200,
      body: { id: seeded.connection.id, status: 'revoked' },
    });
    expect(Object.keys(answer.body).sort()).toEqual(['id', 'status']);
    expect(acme.demo.stats().revocations).toBeGreaterThanOrEqual(1);
    expect(await tasksStatus(seeded.accessToken)).toBe(401);
    const [row] = await db.sql`
      select access_token_sealed, refresh_token_sealed from connections where id = ${seeded.connection.id}`;
    expect(row).toEqual({ accessTokenSealed: null, refreshTokenSealed: null });

    const again = await call(standard, seeded.path, { method: 'DELETE' });
    expect(again).toMatchObject({ status: 200, body: answer.body });
    expect((await call(full, seeded.path)).body.status).toBe('revoked');
    for (const refused of [
      await call(full, `${seeded.path}/export`),
      await post(full, `${seeded.path}/refresh`),
      await post(full, `${seeded.path}/reconnect-link`),
    ]) {
      expect(refused.status).toBe(409);
      expect(refused.body.error?.code).toBe('conflict');
    }
    expect((await call(full, '/v1/users/sam/connections')).body).toEqual({ data: [] });
  });
});

describe('secrets', () => {
  it('never writes a token to an API log line', () => {
    expect(api.logs.length).toBeGreaterThan(0);
    for (const line of api.logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });

  it('never puts a token into the history of a workflow the calls ran', async () => {
    expect([...workflowIds].filter((id) => id.startsWith('refresh/')).length).toBeGreaterThan(2);
    expect(workflowIds.size).toBeGreaterThan(4);
    for (const workflowId of workflowIds) {
      const history = await historyText(api.temporal, workflowId);
      // The connection id is in every one of them: proof the payloads were decoded.
      expect(history).toContain(workflowId.split('/')[1]);
      for (const secret of secrets) expect(history).not.toContain(secret);
    }
  });
});
