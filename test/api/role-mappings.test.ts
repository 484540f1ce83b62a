import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
/** people:read and people:manage, as every full key has them. */
let admin: TestKey;
/** What agents call with: neither scope. */
let agent: TestKey;
let readOnly: TestKey;
/** A dashboard that may read the mappings, not change them. */
let reader: TestKey;
let otherEnv: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  admin = await createTestKey(db.sql, { env: 'people', access: 'full', name: 'admin console' });
  agent = await createTestKey(db.sql, {
    env: 'people',
    access: 'standard',
    agentId: 'billing-bot',
  });
  readOnly = await createTestKey(db.sql, { env: 'people', access: 'read_only' });
  reader = await createTestKey(db.sql, {
    env: 'people',
    access: 'full',
    scopes: ['people:read'],
  });
  otherEnv = await createTestKey(db.sql, { env: 'people-other', access: 'full' });
});

interface Answer {
  status: number;
  body: {
    data?: unknown;
    error?: {
      code: string;
      retryable: boolean;
      message: string;
      issues?: { path: string; message: string }[];
      [key: string]: unknown;
    };
  };
}

const path = (group: string) => `/v1/role-mappings/${encodeURIComponent(group)}`;

async function call(
  key: TestKey,
  method: 'GET' | 'PUT' | 'DELETE',
  url: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${api.url}${url}`, {
    method,
    headers: {
      ...bearer(key.key),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const list = (key: TestKey = admin) => call(key, 'GET', '/v1/role-mappings');
const put = (group: string, roles: unknown, key: TestKey = admin) =>
  call(key, 'PUT', path(group), { roles });
const remove = (group: string, key: TestKey = admin) => call(key, 'DELETE', path(group));

function expectInvalid(answer: Answer, at: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: 'invalid_request', retryable: false });
  expect(answer.body.error?.issues?.map((issue) => issue.path)).toContain(at);
}

/** The audit events of role mapping changes in an environment, oldest first. */
async function changesIn(environmentId: string) {
  return db.sql<
    { agentId: string; via: string; decision: string; scope: string | null; request: unknown }[]
  >`
    select agent_id, via, decision, scope, request from audit_events
    where environment_id = ${environmentId} and action = 'people.role_mappings'
    order by seq`;
}

describe('role mappings: which groups hold which role', () => {
  it('sets, lists, replaces and removes a group’s roles, each change audited with its key', async () => {
    expect(await list()).toEqual({ status: 200, body: { data: [] } });

    // Given in any order, kept in the order of the roles.
    expect(await put('ops', ['admin', 'operator'])).toEqual({
      status: 200,
      body: { data: { group: 'ops', roles: ['operator', 'admin'] } },
    });
    expect(await put('approvers', ['approver'])).toMatchObject({ status: 200 });
    expect((await list()).body.data).toEqual([
      { group: 'approvers', roles: ['approver'] },
      { group: 'ops', roles: ['operator', 'admin'] },
    ]);

    // Replaced whole, never merged.
    expect((await put('ops', ['approver'])).body.data).toEqual({
      group: 'ops',
      roles: ['approver'],
    });
    // An empty list removes the group.
    expect((await put('approvers', [])).body.data).toEqual({ group: 'approvers', roles: [] });
    expect((await list()).body.data).toEqual([{ group: 'ops', roles: ['approver'] }]);

    expect(await remove('ops')).toEqual({
      status: 200,
      body: { data: { group: 'ops', deleted: true } },
    });
    expect((await list()).body.data).toEqual([]);
    // Nothing left to remove: a mistyped group is noticed.
    const again = await remove('ops');
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: 'not_found', retryable: false });

    const changes = await changesIn(admin.environmentId);
    expect(changes.map((change) => change.request)).toEqual([
      expect.objectContaining({ group: 'ops', roles: ['operator', 'admin'], channel: 'api' }),
      expect.objectContaining({ group: 'approvers', roles: ['approver'] }),
      expect.objectContaining({ group: 'ops', roles: ['approver'] }),
      expect.objectContaining({ group: 'approvers', roles: [] }),
      expect.objectContaining({ group: 'ops', roles: [] }),
    ]);
    for (const change of changes) {
      expect(change).toMatchObject({
        agentId: 'admin console',
        via: 'operator',
        decision: 'allowed',
        scope: null,
        request: { key: { id: admin.id, name: 'admin console' } },
      });
    }
  });

  it('takes group names as providers write them (spaces, slashes, case, GUIDs, 200 characters), and people by email', async () => {
    const groups = [
      'Finance Approvers/EMEA',
      ' spaced ',
      'a/../b',
      '%2F literally',
      '6f1c2b9e-3d4a-4c8b-9e2f-1a2b3c4d5e6f',
      'Ünïcode グループ',
      '😀'.repeat(200), // 200 characters, 400 UTF-16 units
    ];
    for (const group of groups) {
      expect(await put(group, ['approver'])).toEqual({
        status: 200,
        body: { data: { group, roles: ['approver'] } },
      });
    }
    // One person, by email: kept lower-cased, as people are looked up.
    expect(await put('person:Ada.Lovelace@Example.COM', ['approver'])).toEqual({
      status: 200,
      body: { data: { group: 'person:ada.lovelace@example.com', roles: ['approver'] } },
    });
    expect(await remove('person:ADA.LOVELACE@example.com')).toEqual({
      status: 200,
      body: { data: { group: 'person:ada.lovelace@example.com', deleted: true } },
    });
    // Case counts: another group.
    expect(await remove('finance approvers/emea')).toMatchObject({ status: 404 });
    const listed = (await list()).body.data as { group: string }[];
    expect(listed.map((mapping) => mapping.group).sort()).toEqual([...groups].sort());
    for (const group of groups) {
      expect(await remove(group)).toEqual({
        status: 200,
        body: { data: { group, deleted: true } },
      });
    }
    expect((await list()).body.data).toEqual([]);
  });

  it('refuses malformed input in the error envelope, naming the field', async () => {
    const before = (await changesIn(admin.environmentId)).length;
    expectInvalid(await put('ops', ['root']), 'roles.0');
    expectInvalid(await put('ops', ['approver', 'approver']), 'roles');
    expectInvalid(await put('ops', 'approver'), 'roles');
    expectInvalid(await call(admin, 'PUT', path('ops'), {}), 'roles');
    expectInvalid(await call(admin, 'PUT', path('ops'), { roles: [], extra: 1 }), 'extra');
    expectInvalid(await put('x'.repeat(201), ['approver']), 'group');
    expectInvalid(await put('😀'.repeat(201), ['approver']), 'group');
    expectInvalid(await put('tab\there', ['approver']), 'group');
    expectInvalid(await put('person:ada', ['approver']), 'group');
    expectInvalid(await call(admin, 'DELETE', path('ops'), { force: true }), 'force');
    const unknown = await put('ops', ['root']);
    expect(unknown.body.error?.message).toMatch(/^Invalid request body \(roles\.0: /);
    // Nothing was stored by any of them.
    expect((await list()).body.data).toEqual([]);
    expect(await changesIn(admin.environmentId)).toHaveLength(before);
  });

  it('needs people:read to list and people:manage to change, which agents’ keys lack', async () => {
    for (const key of [agent, readOnly]) {
      const read = await list(key);
      expect(read.status).toBe(403);
      expect(read.body.error).toMatchObject({
        code: 'insufficient_access',
        retryable: false,
        required_scope: 'people:read',
      });
    }
    const written = await put('ops', ['operator'], agent);
    expect(written.status).toBe(403);
    expect(written.body.error).toMatchObject({
      code: 'insufficient_access',
      required_scope: 'people:manage',
    });
    expect((await remove('ops', agent)).body.error).toMatchObject({
      code: 'insufficient_access',
      required_scope: 'people:manage',
    });
    expect((await put('ops', ['operator'], readOnly)).status).toBe(403);

    // A reader reads, and cannot write.
    expect(await list(reader)).toEqual({ status: 200, body: { data: [] } });
    expect((await put('ops', ['operator'], reader)).body.error).toMatchObject({
      code: 'insufficient_access',
      required_scope: 'people:manage',
    });
  });

  it('an agent’s key cannot map its own group to approver', async () => {
    const before = (await changesIn(admin.environmentId)).length;
    const grab = await put('billing-bot', ['approver'], agent);
    expect(grab.status).toBe(403);
    expect(grab.body.error).toMatchObject({
      code: 'insufficient_access',
      required_scope: 'people:manage',
    });
    const viaDelete = await remove('billing-bot', agent);
    expect(viaDelete.status).toBe(403);
    expect((await list()).body.data).toEqual([]);
    expect(await changesIn(admin.environmentId)).toHaveLength(before);
  });

  it('keeps each environment’s mappings to itself', async () => {
    expect((await put('shared-name', ['admin'])).status).toBe(200);
    expect((await list(otherEnv)).body.data).toEqual([]);
    expect((await remove('shared-name', otherEnv)).status).toBe(404);
    expect((await put('shared-name', ['approver'], otherEnv)).body.data).toEqual({
      group: 'shared-name',
      roles: ['approver'],
    });
    expect((await list()).body.data).toEqual([{ group: 'shared-name', roles: ['admin'] }]);
    expect((await list(otherEnv)).body.data).toEqual([
      { group: 'shared-name', roles: ['approver'] },
    ]);
  });
});
