import { beforeAll, describe, expect, it } from '@jest/globals';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let locked: TestApi;
let full: TestKey;
let standard: TestKey;
let reader: TestKey;
let other: TestKey;
/** Every response body of this file, to prove no secret ever comes back. */
const responses: string[] = [];
const secrets: string[] = [];

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  locked = started.add(
    await startTestApi(testConfig(db.url, { WEBHOOK_ALLOW_PRIVATE: 'false' }), db.sql),
  );
  full = await createTestKey(db.sql, { env: 'production', access: 'full', agentId: 'ops' });
  standard = await createTestKey(db.sql, { env: 'production', access: 'standard' });
  reader = await createTestKey(db.sql, { env: 'production', access: 'read_only' });
  other = await createTestKey(db.sql, { env: 'staging', access: 'full' });
});

async function call(key: TestKey, method: string, body?: unknown, target: TestApi = api) {
  const response = await fetch(`${target.url}/v1/webhook-endpoint`, {
    method,
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  responses.push(text);
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

function newSecret(): string {
  const secret = generateWebhookSecret();
  secrets.push(secret);
  return secret;
}

describe('webhook endpoint', () => {
  it('is set, shown with only a hint of its secret, replaced and deleted', async () => {
    expect(await call(full, 'GET')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', retryable: false } },
    });

    const secret = newSecret();
    const set = await call(full, 'PUT', { url: 'https://example.com/hooks', secret });
    expect(set).toEqual({
      status: 200,
      body: {
        url: 'https://example.com/hooks',
        secret_hint: `…${secret.slice(-4)}`,
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updated_by: 'ops',
        audit_events: false,
        audit_cursor: null,
      },
    });
    expect(await call(reader, 'GET')).toEqual(set);
    expect((await call(other, 'GET')).status).toBe(404);

    const replacement = newSecret();
    const replaced = await call(full, 'PUT', { url: 'http://127.0.0.1:9/h', secret: replacement });
    expect(replaced.body).toMatchObject({
      url: 'http://127.0.0.1:9/h',
      secret_hint: `…${replacement.slice(-4)}`,
    });
    expect((await call(standard, 'GET')).body).toEqual(replaced.body);

    expect(await call(full, 'DELETE')).toEqual({ status: 200, body: { ok: true } });
    expect((await call(full, 'GET')).status).toBe(404);
    expect((await call(full, 'DELETE')).body).toMatchObject({ error: { code: 'not_found' } });
  });

  it.each([
    ['url', { url: 'ftp://example.com/x' }],
    ['url', { url: 'not a url' }],
    ['url', { url: `https://example.com/${'a'.repeat(2048)}` }],
    ['url', { url: 'https://user:pass@example.com/x' }],
    ['secret', { secret: 'whsec_short' }],
    ['secret', { secret: `sk_${'A'.repeat(40)}` }],
    ['secret', { secret: `whsec_${'A'.repeat(30)}==` }],
    ['extra', { extra: true }],
  ])('refuses a bad %s with 400 naming the field', async (field, change) => {
    const body = { url: 'https://example.com/hooks', secret: newSecret(), ...change };
    const response = await call(full, 'PUT', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      error: {
        code: 'invalid_request',
        retryable: false,
        issues: [expect.objectContaining({ path: field })],
      },
    });
  });

  it('can be changed by full-access keys only', async () => {
    const body = { url: 'https://example.com/hooks', secret: newSecret() };
    for (const key of [standard, reader]) {
      for (const method of ['PUT', 'DELETE']) {
        const response = await call(key, method, method === 'PUT' ? body : undefined);
        expect(response).toMatchObject({
          status: 403,
          body: { error: { code: 'insufficient_access', required_access: 'full' } },
        });
      }
    }
    const anonymous = await fetch(`${api.url}/v1/webhook-endpoint`);
    expect(anonymous.status).toBe(401);
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest',
    'http://10.1.2.3/h',
    'http://[::ffff:192.168.0.1]/h',
    // IPv6 forms that carry a loopback or metadata IPv4 address.
    'http://[::127.0.0.2]/h',
    'http://[64:ff9b::7f00:2]/h',
    'http://[2002:7f00:2::]/h',
    'http://[64:ff9b::a9fe:a9fe]/h',
    'http://2130706433/h',
  ])('refuses %s when private addresses are not allowed', async (url) => {
    const response = await call(full, 'PUT', { url, secret: newSecret() }, locked);
    expect(response).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'invalid_request',
          issues: [{ path: 'url', message: expect.stringMatching(/loopback, private/) }],
        },
      },
    });
  });

  it('is documented in the connected-users OpenAPI document', async () => {
    const doc = (await (await fetch(`${api.url}/openapi/connected-users.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const path = doc.paths['/v1/webhook-endpoint'];
    expect(
      Object.fromEntries(Object.entries(path ?? {}).map(([m, op]) => [m, op.operationId])),
    ).toEqual({
      get: 'get_webhook_endpoint',
      put: 'set_webhook_endpoint',
      delete: 'delete_webhook_endpoint',
    });
  });

  it('never answers with a secret', () => {
    const everything = [...responses, ...api.logs, ...locked.logs].join('\n');
    for (const secret of secrets) expect(everything).not.toContain(secret.slice('whsec_'.length));
  });
});
