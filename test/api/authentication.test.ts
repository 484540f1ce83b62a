import { beforeAll, describe, expect, it } from '@jest/globals';
import { revokeApiKey } from '../../activities/db/api-keys.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { answeredWithinKeyBound } from '../support/key-change.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let full: TestKey;
let standard: TestKey;
let readOnly: TestKey;
let narrow: TestKey;
/** Full access, but scoped to auth configs only: no `funded_access:read`. */
let noFundedRead: TestKey;
let otherEnv: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  full = await createTestKey(db.sql, { env: 'production', access: 'full', agentId: 'ops-bot' });
  standard = await createTestKey(db.sql, { env: 'production', access: 'standard' });
  readOnly = await createTestKey(db.sql, { env: 'production', access: 'read_only' });
  narrow = await createTestKey(db.sql, {
    env: 'production',
    access: 'full',
    scopes: ['funded_access:read'],
  });
  noFundedRead = await createTestKey(db.sql, {
    env: 'production',
    access: 'full',
    scopes: ['auth_configs:read', 'auth_configs:manage', 'funded_access:manage'],
  });
  otherEnv = await createTestKey(db.sql, { env: 'staging', access: 'full' });
});

function fundedAccess(headers: Record<string, string>, method = 'GET', body?: unknown) {
  return fetch(`${api.url}/v1/funded-access`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as {
    error: { code: string; message: string; retryable: boolean };
  };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.retryable).toBe(false);
  return body.error;
}

describe('key authentication', () => {
  it('refuses a request without a key with invalid_api_key', async () => {
    const response = await fundedAccess({});
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expectError(response, 401, 'invalid_api_key');
  });

  it('refuses unknown, malformed and non-Bearer keys', async () => {
    const unknown = `gk_production_${'A'.repeat(32)}`;
    await expectError(await fundedAccess(bearer(unknown)), 401, 'invalid_api_key');
    await expectError(await fundedAccess(bearer('not-a-key')), 401, 'invalid_api_key');
    await expectError(
      await fundedAccess({ authorization: `Basic ${full.key}` }),
      401,
      'invalid_api_key',
    );
    await expectError(await fundedAccess({ authorization: 'Bearer' }), 401, 'invalid_api_key');
  });

  it('accepts the key through either scheme: Authorization Bearer and X-API-Key', async () => {
    expect((await fundedAccess(bearer(full.key))).status).toBe(200);
    expect((await fundedAccess({ 'x-api-key': full.key })).status).toBe(200);
  });

  it('refuses two different keys in the two headers', async () => {
    const response = await fundedAccess({ ...bearer(full.key), 'x-api-key': standard.key });
    await expectError(response, 401, 'invalid_api_key');
  });

  it('refuses a revoked key', async () => {
    const doomed = await createTestKey(db.sql, { env: 'production', access: 'full' });
    expect((await fundedAccess(bearer(doomed.key))).status).toBe(200);
    expect(await revokeApiKey(db.sql, doomed.id)).toBe(true);
    // Revocation reaches each API process's key cache within its documented bound (2 s).
    await answeredWithinKeyBound(
      async () => (await fundedAccess(bearer(doomed.key))).status,
      401,
      Date.now(),
    );
    await expectError(await fundedAccess(bearer(doomed.key)), 401, 'invalid_api_key');
  });

  it('refuses a key of another environment than the one the caller names', async () => {
    const wrong = await fundedAccess({
      ...bearer(otherEnv.key),
      'gatehouse-environment': 'production',
    });
    await expectError(wrong, 401, 'invalid_api_key');
    const right = await fundedAccess({
      ...bearer(otherEnv.key),
      'gatehouse-environment': 'staging',
    });
    expect(right.status).toBe(200);
  });

  it('keeps environments apart: a key sees only its own environment', async () => {
    expect((await fundedAccess(bearer(full.key), 'PUT', { enabled: true })).status).toBe(200);
    const own = (await (await fundedAccess(bearer(full.key))).json()) as {
      data: { enabled: boolean };
    };
    const other = (await (await fundedAccess(bearer(otherEnv.key))).json()) as {
      data: { enabled: boolean };
    };
    expect(own.data.enabled).toBe(true);
    expect(other.data.enabled).toBe(false);
  });
});

describe('access levels and scopes', () => {
  it('lets a read-only key read but not write', async () => {
    expect((await fundedAccess(bearer(readOnly.key))).status).toBe(200);
    const error = await expectError(
      await fundedAccess(bearer(readOnly.key), 'PUT', { enabled: true }),
      403,
      'insufficient_access',
    );
    expect(error).toMatchObject({ required_access: 'standard' });
  });

  it('refuses a key whose scopes do not cover the operation', async () => {
    const error = await expectError(
      await fundedAccess(bearer(standard.key), 'PUT', { enabled: false }),
      403,
      'insufficient_access',
    );
    expect(error).toMatchObject({ required_scope: 'funded_access:manage' });
    const narrowError = await expectError(
      await fundedAccess(bearer(narrow.key), 'PUT', { enabled: false }),
      403,
      'insufficient_access',
    );
    expect(narrowError).toMatchObject({ required_scope: 'funded_access:manage' });
    expect((await fundedAccess(bearer(narrow.key))).status).toBe(200);
  });

  it('refuses a read to a key without funded_access:read, whatever else it holds', async () => {
    for (const headers of [bearer(noFundedRead.key), { 'x-api-key': noFundedRead.key }]) {
      const error = await expectError(await fundedAccess(headers), 403, 'insufficient_access');
      expect(error).toMatchObject({ required_scope: 'funded_access:read' });
    }
    // The same key can read what its scopes do cover.
    const configs = await fetch(`${api.url}/v1/auth-configs`, {
      headers: bearer(noFundedRead.key),
    });
    expect(configs.status).toBe(200);
  });

  it('changes settings through the X-API-Key scheme too', async () => {
    const before = (await (await fundedAccess(bearer(full.key))).json()) as {
      data: { enabled: boolean };
    };
    const response = await fundedAccess({ 'x-api-key': full.key }, 'PUT', {
      enabled: !before.data.enabled,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { enabled: boolean; updated_by: string } };
    expect(body.data).toMatchObject({ enabled: !before.data.enabled, updated_by: 'ops-bot' });
    const after = (await (await fundedAccess({ 'x-api-key': full.key })).json()) as {
      data: { enabled: boolean };
    };
    expect(after.data.enabled).toBe(!before.data.enabled);
  });

  it('lets a full key change settings and records its agent as the author', async () => {
    const response = await fundedAccess(bearer(full.key), 'PUT', { enabled: false });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { enabled: boolean; updated_by: string; updated_at: string };
    };
    expect(body.data).toMatchObject({ enabled: false, updated_by: 'ops-bot' });
    expect(new Date(body.data.updated_at).getTime()).not.toBeNaN();
  });
});
