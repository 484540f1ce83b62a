import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { markConnectionExpired } from '../../activities/db/connections.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { historyText } from '../support/workflow-history.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

let stack: CallStack;
let alice: SeededConnection;
let readOnly: TestKey;
let standard: TestKey;
/** Every token a connection of this file had: none may leak anywhere. */
const secrets: string[] = [];

interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  upstream_status?: number;
  reconnect_url?: string;
  issues?: { path: string; message: string }[];
  approval?: { id: string; status: string; requested_from: string[]; expires_at: string };
}

function errorOf(answer: Answer): ErrorBody {
  const error = answer.body.error as ErrorBody | undefined;
  if (!error)
    throw new Error(`expected an error, got ${answer.status} ${JSON.stringify(answer.body)}`);
  return error;
}

const started = stopsAfterAll();

beforeAll(async () => {
  // An upstream timeout short enough that `upstream_timeout` is provable without a long wait,
  // and long enough that the demo app (in this process) answers every other call before it on
  // a loaded machine too: 1.5 s was not.
  stack = started.add(await startCallStack({ env: { UPSTREAM_TIMEOUT_MS: '5000' } }));
  alice = await stack.connect('u_alice');
  secrets.push(alice.accessToken, alice.refreshToken);
  readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
  standard = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'standard-agent',
  });
});

afterEach(() => {
  stack.acme.demo.faults.reset();
});

describe('an allowed read', () => {
  it("answers {ok: true, data} with the app's result", async () => {
    const answer = await stack.run('acme.list_tasks', { user: 'u_alice', input: {} });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, data: { tasks: expect.any(Array) } });
  });

  it('passes an app-level failure through as data, not an envelope', async () => {
    const answer = await stack.run('acme.get_task', { user: 'u_alice', input: { id: 't_nope' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: false, upstream_status: 404 });
    expect(answer.body.data).toEqual(expect.objectContaining({ error: expect.anything() }));
  });

  it('refreshes once and retries when the app answers 401 to the stored token', async () => {
    const bob = await stack.connect('u_bob_401');
    secrets.push(bob.accessToken, bob.refreshToken);
    // The app has forgotten this access token (the refresh token is still good).
    await stack.forgetAccessToken(bob);
    const before = stack.acme.demo.stats();
    const answer = await stack.run('acme.list_tasks', { user: 'u_bob_401' });
    expect(answer.status).toBe(200);
    expect(answer.body.ok).toBe(true);
    const after = stack.acme.demo.stats();
    expect(after.tokenRequests.refresh_token).toBe(before.tokenRequests.refresh_token + 1);
    // The refused request and its one retry.
    expect(after.apiRequests - before.apiRequests).toBe(2);
  });
});

describe('stopped before the app', () => {
  it('validates the input against the action schema, naming the field, before anything runs', async () => {
    const requests = stack.acme.demo.stats().apiRequests;
    const [audited] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from audit_events`;
    const answer = await stack.run('acme.create_task', {
      user: 'u_alice',
      input: { title: '', colour: 'red' },
    });
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.issues?.map((issue) => issue.path).sort()).toEqual([
      'input.colour',
      'input.title',
    ]);
    expect(stack.acme.demo.stats().apiRequests).toBe(requests);
    // Refused before it ran, and recorded as such: every call is audited, refused ones too.
    const [after] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from audit_events`;
    expect(after?.n).toBe((audited?.n ?? 0) + 1);
    const [refusal] = await stack.db.sql<{ decision: string; reason: string }[]>`
      select decision, reason from audit_events order by id desc limit 1`;
    expect(refusal).toMatchObject({
      decision: 'denied',
      reason: expect.stringContaining('input.title'),
    });
  });

  it('refuses a NUL character in the input, naming the field', async () => {
    const answer = await stack.run('acme.list_tasks', {
      user: 'u_alice',
      input: { status: 'open\u0000' },
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'input.status', message: expect.any(String) }],
    });
  });

  it.each([
    [{}, 'user'],
    [{ user: 'u_alice', input: [] }, 'input'],
    [{ user: 'u_alice', extra: 1 }, 'extra'],
    [{ user: '' }, 'user'],
  ])('rejects the body %j naming %s', async (body, path) => {
    const answer = await stack.run('acme.list_tasks', body);
    expect(answer.status).toBe(400);
    expect(errorOf(answer).issues?.map((issue) => issue.path)).toContain(path);
  });

  it('answers 404 for an unknown action', async () => {
    const answer = await stack.run('acme.fly', { user: 'u_alice' });
    expect(answer.status).toBe(404);
    expect(errorOf(answer).code).toBe('not_found');
  });

  it('answers connection_required for a user without a connection to the app', async () => {
    const answer = await stack.run('acme.list_tasks', { user: 'u_nobody' });
    expect(answer.status).toBe(409);
    expect(errorOf(answer)).toMatchObject({ code: 'connection_required', retryable: false });
  });

  it('answers connection_expired with a reconnect URL when the refresh token is dead', async () => {
    const carol = await stack.connect('u_carol');
    secrets.push(carol.accessToken, carol.refreshToken);
    await markConnectionExpired(stack.db.sql, carol.connection.id);
    const answer = await stack.run('acme.list_tasks', { user: 'u_carol' });
    expect(answer.status).toBe(409);
    const error = errorOf(answer);
    expect(error.code).toBe('connection_expired');
    expect(error.reconnect_url).toMatch(new RegExp(`^${stack.config.api.publicUrl}/connect/`));
    // One active reconnect link per connection: the same URL again.
    const again = errorOf(await stack.run('acme.list_tasks', { user: 'u_carol' }));
    expect(again.reconnect_url).toBe(error.reconnect_url);
  });

  it('turns a revoked grant found mid-call into connection_expired', async () => {
    const dave = await stack.connect('u_dave');
    secrets.push(dave.accessToken, dave.refreshToken);
    await stack.acme.demo.revokeGrants(dave.account);
    const answer = await stack.run('acme.list_tasks', { user: 'u_dave' });
    expect(answer.status).toBe(409);
    expect(errorOf(answer).code).toBe('connection_expired');
  });

  it('refuses a read-only key, and accepts a standard one', async () => {
    const refused = await stack.run('acme.list_tasks', { user: 'u_alice' }, { key: readOnly });
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe('insufficient_access');
    const ran = await stack.run('acme.list_tasks', { user: 'u_alice' }, { key: standard });
    expect(ran.status).toBe(200);
  });

  it('denies a destructive action under the default policy', async () => {
    const answer = await stack.run('acme.delete_task', { user: 'u_alice', input: { id: 't_1' } });
    expect(answer.status).toBe(403);
    expect(errorOf(answer)).toMatchObject({ code: 'denied_by_policy', retryable: false });
  });
});

describe("the app's own failures", () => {
  it.each([
    ['rate_limit', 429, 'upstream_rate_limited', true, 429],
    ['bad_request', 400, 'upstream_invalid_request', false, 400],
    ['unavailable', 503, 'upstream_unavailable', true, 503],
    // Our status is the code's; the app's own is upstream_status.
    ['bad_gateway', 503, 'upstream_unavailable', true, 502],
    ['gateway_timeout', 504, 'upstream_timeout', true, 504],
  ] as const)('%s → %i %s', async (mode, status, code, retryable, upstreamStatus) => {
    stack.acme.demo.faults.set({ mode, retryAfterSeconds: 7 });
    const answer = await stack.run('acme.list_tasks', { user: 'u_alice' });
    expect(answer.status).toBe(status);
    expect(errorOf(answer)).toMatchObject({ code, retryable, upstream_status: upstreamStatus });
    if (mode === 'rate_limit') expect(answer.headers.get('retry-after')).toBe('7');
  });

  it('an answer cut off mid-body → 503 upstream_unavailable; a write is not sent again', async () => {
    await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
    try {
      stack.acme.demo.faults.set({ mode: 'cut_off' });
      const before = stack.acme.demo.stats().apiRequests;
      const write = await stack.run('acme.create_task', {
        user: 'u_alice',
        input: { title: 'answer cut off' },
      });
      expect(write.status).toBe(503);
      // The app had the request: the caller is told the write may have happened.
      expect(errorOf(write)).toMatchObject({
        code: 'upstream_unavailable',
        write_may_have_happened: true,
        message: expect.stringContaining('may have carried it out'),
      });
      expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    } finally {
      stack.acme.demo.faults.reset();
      await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
    }
  });

  it('labels the call workflow of a failed call failed, as its audit event says', async () => {
    stack.acme.demo.faults.set({ mode: 'unavailable' });
    const answer = await stack.run('acme.list_tasks', {
      user: 'u_alice',
      input: { status: 'done' },
    });
    expect(answer.status).toBe(503);
    const query = `WorkflowType = 'governedCall' AND GatehouseUser = 'u_alice' AND GatehouseDecision = 'failed'`;
    // Visibility is eventually consistent.
    await eventually(
      'the failed call listed',
      async () => ((await stack.api.temporal.workflow.count(query)).count > 0 ? true : null),
      250,
    );
  });

  it('a slow app → 504 upstream_timeout after one wait of UPSTREAM_TIMEOUT_MS; a write says it may have happened', async () => {
    await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
    try {
      stack.acme.demo.faults.set({ mode: 'slow', delayMs: 20_000 });
      const before = stack.acme.demo.stats().apiRequests;
      const read = await stack.run('acme.list_tasks', { user: 'u_alice' });
      expect(read.status).toBe(504);
      expect(errorOf(read)).toMatchObject({ code: 'upstream_timeout', upstream_status: 504 });
      // The documented wait is the real one: a timed-out read is not tried twice more.
      expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
      // Reading is always safe to retry: no claim either way.
      expect(errorOf(read)).not.toHaveProperty('write_may_have_happened');

      const beforeWrite = stack.acme.demo.stats().apiRequests;
      const write = await stack.run('acme.create_task', {
        user: 'u_alice',
        input: { title: 'slow write' },
      });
      expect(write.status).toBe(504);
      expect(errorOf(write)).toMatchObject({
        code: 'upstream_timeout',
        retryable: true,
        write_may_have_happened: true,
        message: expect.stringContaining('may have carried it out'),
      });
      expect(stack.acme.demo.stats().apiRequests - beforeWrite).toBe(1);
      const [audited] = await stack.db.sql<{ response: Record<string, unknown> }[]>`
        select response from audit_events
        where user_external_id = 'u_alice' and action = 'acme.create_task'
        order by id desc limit 1`;
      expect(audited?.response).toMatchObject({
        error: 'upstream_timeout',
        write_may_have_happened: true,
      });
    } finally {
      stack.acme.demo.faults.reset();
      await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
    }
  });

  it.each([
    // The app's own 503: it says it did not take the request.
    ['unavailable', 503, 'upstream_unavailable', false],
    // A gateway's 502 or 504: the app behind it may have had the write.
    ['bad_gateway', 503, 'upstream_unavailable', true],
    ['gateway_timeout', 504, 'upstream_timeout', true],
  ] as const)(
    'a write meeting the app fault %s → %i %s, write_may_have_happened %s',
    async (mode, status, code, may) => {
      await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
      try {
        stack.acme.demo.faults.set({ mode });
        const write = await stack.run('acme.create_task', {
          user: 'u_alice',
          input: { title: `write under ${mode}` },
        });
        expect(write.status).toBe(status);
        expect(errorOf(write)).toMatchObject({ code, write_may_have_happened: may });
      } finally {
        stack.acme.demo.faults.reset();
        await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
      }
    },
  );
});

describe('limits and keys', () => {
  it('refuses a wrong key with invalid_api_key', async () => {
    const answer = await stack.run(
      'acme.list_tasks',
      { user: 'u_alice' },
      { key: { key: 'gk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', id: '', environmentId: '' } },
    );
    expect(answer.status).toBe(401);
    expect(errorOf(answer).code).toBe('invalid_api_key');
  });

  it("answers 413 when the app's answer is over the body limit, and keeps it out of Temporal", async () => {
    const small = await startCallStack({ env: { BODY_LIMIT_BYTES: '2048' } });
    try {
      await small.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
      await small.connect('u_big');
      for (const n of [1, 2]) {
        const created = await small.run('acme.create_task', {
          user: 'u_big',
          input: { title: `big ${String(n)}`, notes: 'x'.repeat(1500) },
        });
        expect(created.status).toBe(200);
      }
      const answer = await small.run('acme.list_tasks', { user: 'u_big' });
      expect(answer.status).toBe(413);
      expect(errorOf(answer)).toMatchObject({ code: 'payload_too_large', upstream_status: 200 });
    } finally {
      await small.stop();
    }
  });
});

describe('identical calls', () => {
  it('coalesce unless an Idempotency-Key tells them apart', async () => {
    const input = { title: `twins ${String(Date.now())}` };
    const first = errorOf(await stack.run('acme.create_task', { user: 'u_alice', input }));
    const same = errorOf(await stack.run('acme.create_task', { user: 'u_alice', input }));
    expect(same.approval?.id).toBe(first.approval?.id);
    const keyed = errorOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_alice', input },
        { headers: { 'idempotency-key': 'second-one' } },
      ),
    );
    expect(keyed.approval?.id).not.toBe(first.approval?.id);
    // Key order in the input does not make a different call.
    const reordered = errorOf(
      await stack.run('acme.update_task', { user: 'u_alice', input: { id: 't_1', title: 'x' } }),
    );
    const again = errorOf(
      await stack.run('acme.update_task', { user: 'u_alice', input: { title: 'x', id: 't_1' } }),
    );
    expect(again.approval?.id).toBe(reordered.approval?.id);
  });
});

describe('Temporal', () => {
  it('labels every call workflow for operators, with no secret in any history', async () => {
    const answer = await stack.run('acme.list_tasks', {
      user: 'u_alice',
      input: { status: 'open' },
    });
    expect(answer.status).toBe(200);
    const { temporal } = stack.api;
    // Visibility is eventually consistent.
    const found = await eventually(
      'the allowed call listed by its labels',
      async () => {
        const listed: string[] = [];
        for await (const execution of temporal.workflow.list({
          query: `WorkflowType = 'governedCall' AND GatehouseUser = 'u_alice' AND GatehouseAgent = 'test-agent' AND GatehouseAction = 'acme.list_tasks' AND GatehouseDecision = 'allowed'`,
        })) {
          listed.push(execution.workflowId);
        }
        return listed.length > 0 ? listed : null;
      },
      250,
    );
    expect(found.length).toBeGreaterThan(0);
    const workflowId = found[0] as string;
    expect(workflowId).toMatch(/^call\/test\/acme\.list_tasks\/[0-9a-f]{32}$/);
    const description = await temporal.workflow.getHandle(workflowId).describe();
    expect(await description.staticSummary()).toBe(
      'acme.list_tasks for user u_alice, agent test-agent',
    );
    expect(description.typedSearchAttributes.getAll().map((pair) => pair.key.name)).toEqual(
      expect.arrayContaining([
        'GatehouseEnvironment',
        'GatehouseAgent',
        'GatehouseUser',
        'GatehouseAction',
        'GatehouseDecision',
      ]),
    );

    const ids: string[] = [];
    for await (const execution of temporal.workflow.list({
      query: `WorkflowType = 'governedCall' AND GatehouseEnvironment = 'test'`,
    })) {
      ids.push(execution.workflowId);
    }
    expect(ids.length).toBeGreaterThan(3);
    for (const id of new Set(ids)) {
      const text = await historyText(temporal, id);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    for (const line of stack.api.logs) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
  });
});
