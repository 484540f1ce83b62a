import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let admin: TestKey;
let reader: TestKey;
let other: TestKey;
/** A standard key, as agents call with: it reads policies but cannot change them. */
let agent: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  admin = await createTestKey(db.sql, {
    env: 'production',
    access: 'full',
    agentId: 'ops-console',
  });
  agent = await createTestKey(db.sql, {
    env: 'production',
    access: 'standard',
    agentId: 'billing-agent',
  });
  reader = await createTestKey(db.sql, { env: 'production', access: 'read_only' });
  other = await createTestKey(db.sql, { env: 'staging', access: 'full' });
});

async function call(key: TestKey, method: string, path: string, body?: unknown) {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const strict = { read: 'allow', write: 'ask', destructive: 'ask' };

describe('policies', () => {
  it('starts every environment with the default policy for all agents', async () => {
    const list = await call(admin, 'GET', '/v1/policies');
    expect(list).toEqual({
      status: 200,
      body: {
        data: [
          { id: 'default', name: 'Default', environment: 'production', agents: ['*'], version: 1 },
        ],
      },
    });
    const full = await call(admin, 'GET', '/v1/policies/default');
    expect(full.body).toMatchObject({
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      rules: [],
      approval: { requested_from: [], ttl_seconds: 86400 },
    });
  });

  it('replaces a policy as a new version, keeping every version, and names who did it', async () => {
    const rules = [
      { action: 'acme.delete_task', decision: 'deny' },
      { app: 'acme', scope: 'write', decision: 'allow' },
    ];
    const replaced = await call(admin, 'PUT', '/v1/policies/default', { defaults: strict, rules });
    expect(replaced).toEqual({
      status: 200,
      body: { id: 'default', version: 2, updated_by: 'ops-console' },
    });
    const full = await call(admin, 'GET', '/v1/policies/default');
    expect(full.body).toMatchObject({
      version: 2,
      agents: ['*'],
      defaults: strict,
      rules,
      updated_by: 'ops-console',
    });
    const again = await call(admin, 'PUT', '/v1/policies/default', { defaults: strict });
    expect(again.body.version).toBe(3);
    expect((await call(admin, 'GET', '/v1/policies/default')).body.rules).toEqual([]);
    const versions = await db.sql<{ version: number }[]>`
      select version from policy_versions v join environments e on e.id = v.environment_id
      where e.name = 'production' and policy_id = 'default' order by version`;
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);

    // Each version reads back as it was written, by whom.
    const first = await call(admin, 'GET', '/v1/policies/default/versions/1');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      id: 'default',
      version: 1,
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      rules: [],
      updated_by: 'gatehouse',
    });
    const second = await call(reader, 'GET', '/v1/policies/default/versions/2');
    expect(second.body).toMatchObject({
      version: 2,
      defaults: strict,
      rules,
      updated_by: 'ops-console',
    });
    const missing = await call(admin, 'GET', '/v1/policies/default/versions/4');
    expect(missing.status).toBe(404);
    expect((await call(other, 'GET', '/v1/policies/default/versions/2')).status).toBe(404);
    for (const bad of ['0', 'x', '1.5', '2147483648']) {
      const refused = await call(admin, 'GET', `/v1/policies/default/versions/${bad}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'invalid_request',
        issues: [{ path: 'version', message: expect.any(String) }],
      });
    }
  });

  it('creates a policy at version 1 for a new id, and refuses a second claim on an agent', async () => {
    const created = await call(admin, 'PUT', '/v1/policies/billing-bot', {
      name: 'Billing bot',
      agents: ['billing-bot'],
      defaults: { read: 'allow', write: 'allow', destructive: 'ask' },
      approval: { requested_from: ['finance@example.com'], ttl_seconds: 3600 },
    });
    expect(created.body).toEqual({ id: 'billing-bot', version: 1, updated_by: 'ops-console' });
    const clash = await call(admin, 'PUT', '/v1/policies/another', {
      agents: ['billing-bot'],
      defaults: strict,
    });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({
      code: 'conflict',
      agent: 'billing-bot',
      policy: 'billing-bot',
    });
    expect((await call(admin, 'GET', '/v1/policies/another')).status).toBe(404);
  });

  it.each([
    [{ defaults: { read: 'allow', write: 'maybe', destructive: 'deny' } }, 'defaults.write'],
    [{ defaults: { read: 'allow', write: 'ask' } }, 'defaults.destructive'],
    [{ defaults: strict, rules: [{ decision: 'deny' }] }, 'rules.0'],
    [{ defaults: strict, rules: [{ action: 'no-dot', decision: 'deny' }] }, 'rules.0.action'],
    [{ defaults: strict, approval: { ttl_seconds: 0 } }, 'approval.ttl_seconds'],
    [{ defaults: strict, colour: 'red' }, 'colour'],
    [{}, 'defaults'],
  ])('refuses %j naming %s', async (body, path) => {
    const refused = await call(admin, 'PUT', '/v1/policies/default', body);
    expect(refused.status).toBe(400);
    const issues = (refused.body.error as { issues: { path: string }[] }).issues;
    expect(issues.map((i) => i.path)).toContain(path);
  });

  it('refuses a malformed policy id', async () => {
    const refused = await call(admin, 'PUT', '/v1/policies/Not_A_Slug', { defaults: strict });
    expect(refused.status).toBe(400);
  });

  it('refuses changes from a read-only key', async () => {
    expect((await call(reader, 'PUT', '/v1/policies/default', { defaults: strict })).status).toBe(
      403,
    );
    expect((await call(reader, 'GET', '/v1/policies')).status).toBe(200);
  });

  it('refuses every change from a standard key: an agent cannot loosen its own governance', async () => {
    const before = (await call(admin, 'GET', '/v1/policies/default')).body;
    const allowAll = { read: 'allow', write: 'allow', destructive: 'allow' };
    for (const [path, body] of [
      ['/v1/policies/default', { defaults: allowAll }],
      // Moving itself (or another agent) under a new allow-all policy.
      ['/v1/policies/loose', { agents: ['billing-agent'], defaults: allowAll }],
      ['/v1/policies/loose', { agents: ['someone-else'], defaults: allowAll }],
    ] as const) {
      const refused = await call(agent, 'PUT', path, body);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: 'insufficient_access',
        required_scope: 'policies:manage',
      });
    }
    expect((await call(admin, 'GET', '/v1/policies/default')).body).toEqual(before);
    expect((await call(admin, 'GET', '/v1/policies/loose')).status).toBe(404);
    // It may still read the policy that governs it.
    expect((await call(agent, 'GET', '/v1/policies/default')).status).toBe(200);
  });

  it('needs policies:read to read and policies:manage to replace, as granted per key', async () => {
    const noScopes = await createTestKey(db.sql, {
      env: 'production',
      access: 'full',
      scopes: [],
    });
    for (const path of [
      '/v1/policies',
      '/v1/policies/default',
      '/v1/policies/default/versions/1',
    ]) {
      const refused = await call(noScopes, 'GET', path);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ required_scope: 'policies:read' });
    }
    const governor = await createTestKey(db.sql, {
      env: 'production',
      access: 'standard',
      agentId: 'policy-editor',
      scopes: ['policies:read', 'policies:manage'],
    });
    const current = (await call(admin, 'GET', '/v1/policies/default')).body;
    const replaced = await call(governor, 'PUT', '/v1/policies/default', {
      defaults: current.defaults,
      rules: current.rules,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.updated_by).toBe('policy-editor');
  });

  it('keeps environments apart', async () => {
    const list = await call(other, 'GET', '/v1/policies');
    expect(list.body).toEqual({
      data: [{ id: 'default', name: 'Default', environment: 'staging', agents: ['*'], version: 1 }],
    });
    expect((await call(other, 'GET', '/v1/policies/billing-bot')).status).toBe(404);
  });
});
