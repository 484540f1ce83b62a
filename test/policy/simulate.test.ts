import { beforeAll, describe, expect, it } from '@jest/globals';
import { v7 as uuidv7 } from 'uuid';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import { auditRequest } from '../../activities/calls/call-records.js';
import type { CallRequest, CallTargetInput } from '../../workflows/call-types.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * POST /v1/policies/{id}/simulate over audit rows as the call workflow writes them
 * (auditRequest, insertAuditEvents), with exact counts and samples for a stricter candidate.
 */
let db: TestDatabase;
let api: TestApi;
let admin: TestKey;
let agent: TestKey;
let environmentId: string;

/** When the seeded calls were recorded: one minute apart from here, in the order seeded. */
const START = Date.parse('2026-03-02T09:00:00Z');
let minute = 0;

async function record(
  target: CallTargetInput,
  options: {
    agent?: string;
    via?: 'api' | 'mcp';
    decision?: 'allowed' | 'blocked' | 'denied' | 'failed';
    reason?: string;
    policy?: { id: string; version: number } | null;
    approvalId?: string | null;
    scope?: null;
    environmentId?: string;
  } = {},
): Promise<string> {
  const call: CallRequest = {
    environmentId: options.environmentId ?? environmentId,
    environmentName: 'sim',
    agentId: options.agent ?? 'writer-bot',
    userExternalId: 'u_sim',
    via: options.via ?? 'api',
    fingerprint: 'f',
    target,
    retryWindowSeconds: 3600,
  };
  const id = uuidv7();
  const policy = options.policy === undefined ? { id: 'default', version: 2 } : options.policy;
  await insertAuditEvents(db.sql, [
    {
      id,
      environmentId: call.environmentId,
      action: target.kind === 'action' ? target.action : `${target.app}.proxy`,
      scope: options.scope === null ? null : target.scope,
      decision: options.decision ?? 'allowed',
      reason: options.reason ?? 'policy default v2: rule (app acme, scope write) → allow',
      agentId: call.agentId,
      via: call.via,
      userExternalId: call.userExternalId,
      connectedUserId: null,
      connectionId: null,
      approvalId: options.approvalId ?? null,
      request: auditRequest(call),
      response: null,
      traceId: `trace-${id}`,
      policyId: policy?.id ?? null,
      policyVersion: policy?.version ?? null,
    },
  ]);
  const time = new Date(START + minute++ * 60_000);
  await db.sql`update audit_events set time = ${time} where id = ${id}`;
  return id;
}

const createTask = (title: string): CallTargetInput => ({
  kind: 'action',
  action: 'acme.create_task',
  app: 'acme',
  scope: 'write',
  input: { title },
});
const deleteTask: CallTargetInput = {
  kind: 'action',
  action: 'acme.delete_task',
  app: 'acme',
  scope: 'destructive',
  input: { id: 't_1' },
};
const proxy = (method: string, path: string, scope: 'read' | 'write' | 'destructive') =>
  ({
    kind: 'proxy',
    app: 'acme',
    scope,
    method,
    path,
    query: '',
    headers: { 'x-env': 'prod' },
    bodyBase64: null,
  }) satisfies CallTargetInput;
const echo = (message: string): CallTargetInput => ({
  kind: 'action',
  action: 'everything.echo',
  app: 'everything',
  scope: 'read',
  input: { message },
});

/** The current version (v2): acme writes allowed, other writes and destructive calls asked. */
const currentBody = {
  defaults: { read: 'allow', write: 'ask', destructive: 'ask' },
  rules: [{ app: 'acme', scope: 'write', decision: 'allow' }],
};

/** Stricter: long titles asked, deleting denied (so the proxy's DELETE too), rm echoes denied. */
const stricter = {
  ...currentBody,
  rules: [
    ...currentBody.rules,
    { action: 'acme.create_task', when: 'size(input.title) > 20', decision: 'ask' },
    { action: 'acme.delete_task', decision: 'deny' },
    {
      action: 'acme.proxy',
      scope: 'write',
      when: "request.headers['x-env'] == 'prod'",
      decision: 'deny',
    },
    { action: 'everything.echo', when: "input.message.startsWith('rm')", decision: 'deny' },
  ],
};

const seeded: Record<string, string> = {};

async function call(key: TestKey, method: string, path: string, body?: unknown) {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const simulate = (body: unknown, query = '', key: TestKey = admin) =>
  call(key, 'POST', `/v1/policies/default/simulate${query}`, body);

const auditCount = async () =>
  (await db.sql<{ n: number }[]>`select count(*)::int as n from audit_events`)[0]?.n;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  admin = await createTestKey(db.sql, { env: 'sim', access: 'full', agentId: 'ops-console' });
  agent = await createTestKey(db.sql, { env: 'sim', access: 'standard', agentId: 'writer-bot' });
  environmentId = admin.environmentId;
  expect((await call(admin, 'PUT', '/v1/policies/default', currentBody)).status).toBe(200);
  const ops = await call(admin, 'PUT', '/v1/policies/ops', {
    agents: ['ops-bot'],
    defaults: { read: 'allow', write: 'allow', destructive: 'allow' },
  });
  expect(ops.status).toBe(200);
  const other = await createTestKey(db.sql, { env: 'elsewhere', access: 'full' });

  // Replayed: calls of agents the default policy governs.
  seeded.short1 = await record(createTask('Ship it'));
  seeded.short2 = await record(createTask('Book the venue'), { via: 'mcp' });
  seeded.long1 = await record(createTask('Write the quarterly report for the board'));
  seeded.delete = await record(deleteTask, { decision: 'blocked' });
  seeded.proxyDelete = await record(proxy('DELETE', 'tasks/t_1', 'destructive'), {
    decision: 'blocked',
  });
  seeded.proxyGet = await record(proxy('GET', 'tasks', 'read'));
  seeded.proxyPost = await record(proxy('POST', 'tasks', 'write'));
  seeded.rm = await record(echo('rm -rf /'), { via: 'mcp' });
  seeded.hello = await record(echo('hello'), { via: 'mcp' });
  // One held call: raised, asked again while pending, then run once approved. One call.
  const approvalId = uuidv7();
  seeded.heldFirst = await record(deleteTask, { decision: 'blocked', approvalId });
  seeded.heldRepeat = await record(deleteTask, { decision: 'blocked', approvalId });
  seeded.heldRun = await record(deleteTask, { decision: 'allowed', approvalId });
  seeded.short3 = await record(createTask('Call Ann'));
  seeded.long2 = await record(createTask('Plan the offsite for the whole company'));

  // Not replayed: a replay, a refused call, a call stopped for its connection, another
  // policy's agent, another environment's call.
  await record(createTask('Write the quarterly report for the board'), {
    policy: null,
    reason: 'replayed: the answer of audit event x (Idempotency-Key)',
  });
  await record(createTask('Write the quarterly report for the board'), {
    scope: null,
    policy: null,
    decision: 'denied',
  });
  await record(createTask('Write the quarterly report for the board'), {
    policy: null,
    decision: 'failed',
  });
  seeded.ops = await record(deleteTask, { agent: 'ops-bot', policy: { id: 'ops', version: 1 } });
  await record(createTask('Write the quarterly report for the board'), {
    environmentId: other.environmentId,
  });
});

const sorted = (ids: (string | undefined)[]) => [...ids].sort();

describe('POST /v1/policies/{id}/simulate', () => {
  it('counts the decisions a stricter candidate changes, with samples, and changes nothing', async () => {
    const before = await auditCount();
    const answer = await simulate(stricter);
    expect(answer.status).toBe(200);
    const body = answer.body as {
      changes: { from: string; to: string; count: number; samples: string[] }[];
      cannot_judge: { count: number; samples: Record<string, unknown>[] };
    } & Record<string, unknown>;
    expect(body).toMatchObject({
      policy: { id: 'default', current_version: 2 },
      window: {
        since: null,
        until: null,
        last: 1000,
        more: false,
        oldest: new Date(START).toISOString(),
        newest: new Date(START + 13 * 60_000).toISOString(),
      },
      calls: 12,
      unchanged: 5,
      not_simulated: null,
      decisions: {
        current: { allow: 9, ask: 3, deny: 0 },
        candidate: { allow: 5, ask: 2, deny: 5 },
      },
    });
    const changes = Object.fromEntries(
      body.changes.map((c) => [
        `${c.from}→${c.to}`,
        { count: c.count, samples: sorted(c.samples) },
      ]),
    );
    expect(changes).toEqual({
      'allow→ask': { count: 2, samples: sorted([seeded.long1, seeded.long2]) },
      'ask→deny': {
        count: 3,
        samples: sorted([seeded.delete, seeded.proxyDelete, seeded.heldFirst]),
      },
      'allow→deny': { count: 1, samples: [seeded.rm] },
    });
    // Most calls first.
    expect(body.changes.map((c) => c.count)).toEqual([3, 2, 1]);
    // The proxy's headers were not kept: a condition reading them cannot be judged.
    expect(body.cannot_judge).toEqual({
      count: 1,
      samples: [
        {
          audit_id: seeded.proxyPost,
          version: 'candidate',
          current: 'allow',
          candidate: 'deny',
          reason: expect.stringMatching(/acme\.proxy.*could not be judged.*headers/) as unknown,
        },
      ],
    });
    // Nothing changed: the policy keeps its version and no row was written.
    expect(await auditCount()).toBe(before);
    const policy = await call(admin, 'GET', '/v1/policies/default');
    expect(policy.body).toMatchObject({ version: 2, rules: currentBody.rules });
  });

  it('finds nothing to change when the candidate is the current version', async () => {
    const answer = await simulate(currentBody);
    expect(answer.body).toMatchObject({
      calls: 12,
      unchanged: 12,
      changes: [],
      cannot_judge: { count: 0, samples: [] },
    });
  });

  it('judges `now` as when each call was recorded', async () => {
    // Calls from 09:10 on would be asked: short3 (09:12), long2 (09:13), held run (09:11).
    const late = {
      ...currentBody,
      rules: [
        ...currentBody.rules,
        {
          app: 'acme',
          scope: 'write',
          when: "now >= timestamp('2026-03-02T09:10:00Z')",
          decision: 'ask',
        },
      ],
    };
    const answer = await simulate(late);
    expect(answer.body).toMatchObject({
      changes: [{ from: 'allow', to: 'ask', count: 2 }],
    });
    const [change] = (answer.body as { changes: { samples: string[] }[] }).changes;
    expect(sorted(change?.samples ?? [])).toEqual(sorted([seeded.short3, seeded.long2]));
  });

  it('replays the last N, or a time window', async () => {
    const last = await simulate(stricter, '?last=2');
    expect(last.body).toMatchObject({
      calls: 2,
      window: { last: 2, more: true },
      changes: [{ from: 'allow', to: 'ask', count: 1, samples: [seeded.long2] }],
      unchanged: 1,
    });
    const since = new Date(START + 9 * 60_000).toISOString();
    const until = new Date(START + 12 * 60_000).toISOString();
    // 09:09 to before 09:12: the held call's three rows, one call.
    const windowed = await simulate(stricter, `?since=${since}&until=${until}`);
    expect(windowed.body).toMatchObject({
      calls: 1,
      window: { since, until, last: 10000, more: false },
      changes: [{ from: 'ask', to: 'deny', count: 1, samples: [seeded.heldFirst] }],
    });
    const none = await simulate(stricter, '?since=2030-01-01T00:00:00Z');
    expect(none.body).toMatchObject({ calls: 0, unchanged: 0, changes: [] });
  });

  it('replays the calls of agents a candidate gives up, under the policy that would govern them', async () => {
    const answer = await call(admin, 'POST', '/v1/policies/ops/simulate', {
      agents: [],
      defaults: { read: 'allow', write: 'allow', destructive: 'allow' },
    });
    // ops-bot's delete, under default v2 (destructive: ask) once ops lets it go.
    expect(answer.body).toMatchObject({
      policy: { id: 'ops', current_version: 1 },
      calls: 1,
      changes: [{ from: 'allow', to: 'ask', count: 1, samples: [seeded.ops] }],
    });
  });

  it('simulates a policy an id does not have yet, as PUT would create it', async () => {
    const answer = await call(admin, 'POST', '/v1/policies/lockdown/simulate', {
      agents: ['writer-bot'],
      defaults: { read: 'deny', write: 'deny', destructive: 'deny' },
    });
    expect(answer.body).toMatchObject({
      policy: { id: 'lockdown', current_version: null },
      calls: 12,
      decisions: { candidate: { allow: 0, ask: 0, deny: 12 } },
    });
    expect((await call(admin, 'GET', '/v1/policies/lockdown')).status).toBe(404);
  });

  it('refuses a candidate PUT would refuse: an agent another policy governs (409)', async () => {
    const answer = await simulate({ ...currentBody, agents: ['*', 'ops-bot'] });
    expect(answer).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict', agent: 'ops-bot', policy: 'ops' } },
    });
  });
  it('counts a condition that runs out of its budget as unjudged, as a live call would, and still answers', async () => {
    const slow = await createTestKey(db.sql, {
      env: 'slow',
      access: 'full',
      agentId: 'ops-console',
    });
    const items = (count: number) => Array.from({ length: count }, (_, i) => i);
    const task = (count: number): CallTargetInput => ({
      kind: 'action',
      action: 'acme.create_task',
      app: 'acme',
      scope: 'write',
      input: { title: 'Many', items: items(count) },
    });
    const small = [];
    for (let i = 0; i < 3; i++) {
      small.push(
        await record(task(3), {
          environmentId: slow.environmentId,
          policy: { id: 'default', version: 1 },
        }),
      );
    }
    const large = await record(task(3000), {
      environmentId: slow.environmentId,
      policy: { id: 'default', version: 1 },
    });
    const answer = await call(slow, 'POST', '/v1/policies/default/simulate', {
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      rules: [
        {
          action: 'acme.create_task',
          when: 'input.items.all(x, input.items.all(y, y >= 0))',
          decision: 'allow',
        },
      ],
    });
    expect(answer.body).toMatchObject({
      calls: 4,
      unchanged: 0,
      changes: [{ from: 'ask', to: 'allow', count: 3 }],
      cannot_judge: {
        count: 1,
        samples: [
          {
            audit_id: large,
            version: 'candidate',
            current: 'ask',
            candidate: 'ask',
            reason: expect.stringMatching(/took longer than \d+ ms/) as unknown,
          },
        ],
      },
    });
    const [change] = (answer.body as { changes: { samples: string[] }[] }).changes;
    expect(sorted(change?.samples ?? [])).toEqual(sorted(small));
  });
});

describe('POST /v1/policies/{id}/simulate: hostile and mistaken requests', () => {
  it('answers 400 for a body that does not parse, and writes nothing', async () => {
    const before = await auditCount();
    const response = await fetch(`${api.url}/v1/policies/default/simulate`, {
      method: 'POST',
      headers: { ...bearer(admin.key), 'content-type': 'application/json' },
      body: '{"defaults": {"read": "allow",',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'invalid_request', retryable: false },
    });
    expect(await auditCount()).toBe(before);
  });

  it('answers 400 naming the rule and the position of a condition that does not parse', async () => {
    const answer = await simulate({
      ...currentBody,
      rules: [
        ...currentBody.rules,
        { action: 'acme.create_task', when: 'input.title >', decision: 'ask' },
      ],
    });
    expect(answer.status).toBe(400);
    const issues = (answer.body as { error: { issues: { path: string; message: string }[] } }).error
      .issues;
    expect(issues).toEqual([
      { path: 'rules.1.when', message: expect.stringMatching(/^line 1, column \d+: /) as unknown },
    ]);
  });

  it('answers 400 for a body not in the shape PUT takes, or none', async () => {
    for (const body of [
      { rules: [] },
      { ...currentBody, extra: true },
      { ...currentBody, rules: [{ decision: 'deny' }] },
      [],
    ]) {
      expect((await simulate(body)).status).toBe(400);
    }
    const empty = await fetch(`${api.url}/v1/policies/default/simulate`, {
      method: 'POST',
      headers: bearer(admin.key),
    });
    expect(empty.status).toBe(400);
  });

  it('bounds the window: at most 10,000 calls, since before until, ISO times', async () => {
    for (const query of [
      '?last=10001',
      '?last=0',
      '?last=ten',
      '?since=yesterday',
      '?since=2026-03-02T10:00:00Z&until=2026-03-02T09:00:00Z',
      '?window=all',
    ]) {
      const answer = await simulate(stricter, query);
      expect({ query, status: answer.status }).toEqual({ query, status: 400 });
      expect(answer.body).toMatchObject({ error: { code: 'invalid_request' } });
    }
    expect((await simulate(stricter, '?last=10000')).status).toBe(200);
  });

  it("needs policies:manage: an agent's standard key cannot see the calls through it", async () => {
    const answer = await simulate(stricter, '', agent);
    expect(answer).toMatchObject({
      status: 403,
      body: { error: { code: 'insufficient_access', required_scope: 'policies:manage' } },
    });
  });
});
