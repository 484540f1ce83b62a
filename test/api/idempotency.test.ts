import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ABANDONED_AFTER_SECONDS,
  claimIdempotencyKey,
} from '../../activities/db/idempotency-keys.js';
import { canonicalJson } from '../../api/calls/fingerprint.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { createTestKey } from '../support/keys.js';

let stack: ConnectStack;
let second: TestApi;

async function createLink(
  api: { url: string },
  body: Record<string, unknown>,
  key: string | undefined,
  apiKey: string = stack.key.key,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${api.url}/v1/connect/links`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const link = { user: 'u_idem', customer: 'acme-co', app: 'acme' };

beforeAll(async () => {
  stack = await startConnectStack();
  // A second API process on the same database: keys must hold across instances.
  second = await startTestApi(
    { ...stack.config, api: { ...stack.config.api, port: 0 } },
    stack.db.sql,
    { temporal: stack.temporal },
  );
});

afterAll(async () => {
  await second.close();
  await stack.stop();
});

describe('Idempotency-Key on POST', () => {
  it('replays the first answer, from any API instance', async () => {
    const first = await createLink(stack.api, link, 'key-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await createLink(stack.api, link, 'key-1');
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const elsewhere = await createLink(second, link, 'key-1');
    expect(elsewhere.body).toEqual(first.body);
    const [count] = await stack.db.sql<
      { n: number }[]
    >`select count(*)::int as n from connect_links`;
    expect(count?.n).toBe(1);
    // The stored answer holds the link: it is sealed, like the link token itself.
    const [stored] = await stack.db.sql<{ body: Buffer }[]>`
      select response_body as body from idempotency_keys where key = 'key-1'`;
    const token = new URL(String(first.body.url)).pathname.split('/').at(-1) ?? '';
    expect(token.length).toBeGreaterThan(10);
    expect(stored?.body.toString('utf8')).not.toContain(token);
  });

  it('without a key, each request is new', async () => {
    const a = await createLink(stack.api, link, undefined);
    const b = await createLink(stack.api, link, undefined);
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('refuses the key for a different request', async () => {
    await createLink(stack.api, link, 'key-2');
    const other = await createLink(stack.api, { ...link, user: 'u_other' }, 'key-2');
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused', retryable: false });
  });

  it('answers 409 conflict while the first request is in flight', async () => {
    // The first request with this key has been claimed but has not finished.
    const hash = createHash('sha256')
      .update(JSON.stringify([stack.key.id, 'POST', '/v1/connect/links', canonicalJson(link)]))
      .digest('hex');
    await claimIdempotencyKey(
      stack.db.sql,
      stack.config.encryption,
      stack.environmentId,
      'key-3',
      hash,
    );
    const busy = await createLink(stack.api, link, 'key-3');
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'conflict' });
  });

  it("never replays one API key's answer to another, even with the same key and body", async () => {
    const first = await createLink(stack.api, link, 'key-shared');
    expect(first.status).toBe(201);
    const readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
    const other = await createLink(stack.api, link, 'key-shared', readOnly.key);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused' });
    expect(JSON.stringify(other.body)).not.toContain(String(first.body.url));
  });

  it('claims afresh a key left in flight by a request that never finished', async () => {
    const hash = createHash('sha256')
      .update(JSON.stringify([stack.key.id, 'POST', '/v1/connect/links', canonicalJson(link)]))
      .digest('hex');
    await claimIdempotencyKey(
      stack.db.sql,
      stack.config.encryption,
      stack.environmentId,
      'key-abandoned',
      hash,
    );
    expect((await createLink(stack.api, link, 'key-abandoned')).status).toBe(409);
    await stack.db.sql`
      update idempotency_keys set created_at = now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS + 1})
      where key = 'key-abandoned'`;
    const retried = await createLink(stack.api, link, 'key-abandoned');
    expect(retried.status).toBe(201);
    const replayed = await createLink(stack.api, link, 'key-abandoned');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(retried.body.id);
  });

  it('forgets a key after 24 hours', async () => {
    const first = await createLink(stack.api, link, 'key-4');
    await stack.db
      .sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = 'key-4'`;
    const later = await createLink(stack.api, link, 'key-4');
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
  });

  it.each([
    ['', 'empty'],
    ['k'.repeat(201), '201 characters'],
  ])('rejects a key that is %s (%s)', async (key) => {
    const answer = await createLink(stack.api, link, key);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'Idempotency-Key', message: expect.any(String) }],
    });
  });

  it('holds for management operations: create_auth_config and create_mcp_oauth_client', async () => {
    const post = async (path: string, body: object, key: string) => {
      const response = await fetch(`${stack.api.url}${path}`, {
        method: 'POST',
        headers: {
          'x-api-key': stack.key.key,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed'),
        body: (await response.json()) as { data?: { id: string }; error?: { code: string } },
      };
    };
    const config = { app: 'acme', name: 'replayed', clientId: 'c-1', clientSecret: 's'.repeat(20) };
    const first = await post('/v1/auth-configs', config, 'mgmt-1');
    const again = await post('/v1/auth-configs', config, 'mgmt-1');
    expect(first.status).toBe(200);
    expect(again).toMatchObject({ status: 200, replayed: 'true' });
    expect(again.body.data?.id).toBe(first.body.data?.id);
    const [count] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from auth_configs where name = 'replayed'`;
    expect(count?.n).toBe(1);
    const changed = await post('/v1/auth-configs', { ...config, name: 'other' }, 'mgmt-1');
    expect(changed.body.error?.code).toBe('idempotency_key_reused');

    const client = {
      app: 'acme',
      client: {
        issuer: 'https://issuer.example',
        clientId: 'mcp-1',
        authMethod: 'none',
        source: 'byo',
      },
    };
    const created = await post('/v1/mcp-oauth-clients', client, 'mgmt-2');
    const replayed = await post('/v1/mcp-oauth-clients', client, 'mgmt-2');
    expect(created.status).toBe(200);
    expect(replayed).toMatchObject({ status: 200, replayed: 'true' });
    expect(replayed.body.data?.id).toBe(created.body.data?.id);
  });

  it.each([1, 200])('accepts a key of %i characters', async (length) => {
    expect((await createLink(stack.api, link, 'k'.repeat(length))).status).toBe(201);
  });
});
