import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { v7 as uuidv7 } from 'uuid';
import { actionCallRequest, sendCallUpdate } from '../support/call-update.js';
import { answerOf, startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The same `Idempotency-Key` never writes twice, however late the retry. A governed
 * call's final answer is kept per (environment, agent, key) for 24 hours and given again to a
 * retry with the same key and the same call (`Idempotent-Replayed: true`, audited as a replay,
 * the app not called); the same key with another call is 409 `idempotency_key_reused`.
 */
let stack: CallStack;
/** Agent `writer`, governed by a policy that allows writes without asking. */
let writer: TestKey;
/** Agent `other-writer`, under the same policy: keys are per agent. */
let otherWriter: TestKey;

const USER = 'u_keys';

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect(USER);
  writer = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'writer' });
  otherWriter = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'full',
    agentId: 'other-writer',
  });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/writers', {
    body: {
      name: 'Writes allowed',
      agents: ['writer', 'other-writer'],
      defaults: { read: 'allow', write: 'allow', destructive: 'allow' },
    },
  });
  expect(policy.status).toBe(200);
});

function keyed(key: string): Record<string, string> {
  return { 'idempotency-key': key };
}

const fresh = (label: string) => `${label}-${String(Date.now())}-${String(Math.random())}`;

async function titlesAtTheApp(title: string): Promise<number> {
  const answer = await stack.run('acme.list_tasks', { user: USER }, { key: writer });
  const tasks = (answer.body.data as { tasks: { title: string }[] }).tasks;
  return tasks.filter((task) => task.title === title).length;
}

interface Row {
  decision: string;
  reason: string | null;
  response: Record<string, unknown> | null;
  approvalId: string | null;
}

async function rowOf(answer: Answer): Promise<Row | undefined> {
  const [row] = await stack.db.sql<Row[]>`
    select decision, reason, response, approval_id from audit_events
    where trace_id = ${answer.headers.get('x-trace-id') ?? ''}`;
  return row;
}

function approvalIdOf(answer: Answer): string {
  const error = answer.body.error as { code?: string; approval?: { id: string } } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(`expected approval_required: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return error.approval.id;
}

describe('an action run retried with its Idempotency-Key', () => {
  it('after the first answered 200: the same answer, replayed, and one write at the app', async () => {
    const key = fresh('k-run');
    const body = { user: USER, input: { title: `once ${key}` } };
    const first = await stack.run('acme.create_task', body, { key: writer, headers: keyed(key) });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const before = stack.acme.demo.stats().apiRequests;
    await sleep(1000);

    const again = await stack.run('acme.create_task', body, { key: writer, headers: keyed(key) });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expect(await titlesAtTheApp(body.input.title)).toBe(1);

    const original = await rowOf(first);
    expect(original?.decision).toBe('allowed');
    const replay = await rowOf(again);
    expect(replay).toMatchObject({ decision: 'allowed', response: original?.response });
    expect(replay?.reason).toMatch(/^replayed: /);
  });

  it('the same key with another call is 409 idempotency_key_reused, audited, and nothing is sent', async () => {
    const key = fresh('k-reused');
    const first = await stack.run(
      'acme.create_task',
      { user: USER, input: { title: `first ${key}` } },
      { key: writer, headers: keyed(key) },
    );
    expect(first.status).toBe(200);
    const before = stack.acme.demo.stats().apiRequests;
    for (const [action, input] of [
      ['acme.create_task', { title: `second ${key}` }],
      ['acme.update_task', { id: 't_x', title: 'other action' }],
    ] as const) {
      const other = await stack.run(
        action,
        { user: USER, input },
        { key: writer, headers: keyed(key) },
      );
      expect(other.status).toBe(409);
      expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused', retryable: false });
      expect(await rowOf(other)).toMatchObject({ decision: 'denied' });
      expect((await rowOf(other))?.reason).toMatch(/^idempotency_key_reused: /);
    }
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expect(await titlesAtTheApp(`second ${key}`)).toBe(0);
  });

  it('keys are per agent: another agent with the same key makes its own call', async () => {
    const key = fresh('k-agents');
    const body = { user: USER, input: { title: `per agent ${key}` } };
    const mine = await stack.run('acme.create_task', body, { key: writer, headers: keyed(key) });
    const theirs = await stack.run('acme.create_task', body, {
      key: otherWriter,
      headers: keyed(key),
    });
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await titlesAtTheApp(body.input.title)).toBe(2);
  });

  it('a held write approved and run: every later retry with its key replays it, never a new approval', async () => {
    const key = fresh('k-held');
    const body = { user: USER, input: { title: `approved once ${key}` } };
    const call = () => stack.run('acme.create_task', body, { headers: keyed(key) });
    const held = await call();
    const approvalId = approvalIdOf(held);
    // Held is not final: the retry meets the same approval.
    expect(approvalIdOf(await call())).toBe(approvalId);
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.status).toBe(200);
    const ran = await call();
    expect(ran.status).toBe(200);
    const before = stack.acme.demo.stats().apiRequests;

    const retries = await Promise.all(Array.from({ length: 8 }, call));
    for (const retry of retries) {
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(ran.body);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await rowOf(retry)).toMatchObject({ decision: 'allowed', approvalId });
    }
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    const approvals = await stack.db.sql`
      select id from approvals where request->'input'->>'title' = ${body.input.title}`;
    expect(approvals).toHaveLength(1);
    expect(await titlesAtTheApp(body.input.title)).toBe(1);
  });

  it('a rejected write replays its denial for the key, and raises no new approval after expiry', async () => {
    const key = fresh('k-rejected');
    const body = { user: USER, input: { title: `rejected ${key}` } };
    const call = () => stack.run('acme.create_task', body, { headers: keyed(key) });
    const approvalId = approvalIdOf(await call());
    await stack.request(stack.approver, 'POST', `/v1/approvals/${approvalId}/reject`);
    const denied = await call();
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'denied_by_policy' });
    // Past the approval's expiry the call would ask anew; the key keeps its final answer.
    await stack.db
      .sql`update approvals set expires_at = now() - interval '1 second' where id = ${approvalId}`;
    const later = await call();
    expect(later.status).toBe(403);
    expect(later.body.error).toMatchObject({ code: 'denied_by_policy' });
  });

  it('a key kept past its retention is a new call', async () => {
    const key = fresh('k-expired');
    const body = { user: USER, input: { title: `expired key ${key}` } };
    const first = await stack.run('acme.create_task', body, { key: writer, headers: keyed(key) });
    expect(first.status).toBe(200);
    await stack.db.sql`
      update call_idempotency_keys set expires_at = now() - interval '1 second' where key = ${key}`;
    const later = await stack.run('acme.create_task', body, { key: writer, headers: keyed(key) });
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await titlesAtTheApp(body.input.title)).toBe(2);
  });

  it('a call the service stopped before the app (no connection) is not final: the retry runs', async () => {
    const key = fresh('k-stopped');
    const body = { user: 'u_keys_later', input: { title: `after connecting ${key}` } };
    const stopped = await stack.run('acme.create_task', body, {
      key: writer,
      headers: keyed(key),
    });
    expect(stopped.body.error).toMatchObject({ code: 'connection_required' });
    await stack.connect('u_keys_later');
    const ran = await stack.run('acme.create_task', body, { key: writer, headers: keyed(key) });
    expect(ran.status).toBe(200);
    expect(ran.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps the answer sealed at rest', async () => {
    const key = fresh('k-sealed');
    const title = `sealed ${key}`;
    const first = await stack.run(
      'acme.create_task',
      { user: USER, input: { title } },
      { key: writer, headers: keyed(key) },
    );
    expect(first.status).toBe(200);
    const [row] = await stack.db.sql<{ answer: string }[]>`
      select answer from call_idempotency_keys where key = ${key}`;
    expect(row?.answer).toMatch(/^v1\./);
    expect(row?.answer).not.toContain(title);
  });
});

describe('a call run that starts after its answer was kept', () => {
  it('gives the kept answer and sends nothing: a retry let through just before it was kept', async () => {
    const key = fresh('k-late-run');
    const input = { title: `kept before the run ${key}` };
    const first = await stack.run(
      'acme.create_task',
      { user: USER, input },
      { key: writer, headers: keyed(key) },
    );
    expect(first.status).toBe(200);
    const call = actionCallRequest(stack, {
      agentId: 'writer',
      user: USER,
      action: 'acme.create_task',
      scope: 'write',
      input,
      idempotencyKey: key,
    });
    const before = stack.acme.demo.stats().apiRequests;
    // What the API sends once its own check has let the retry through (as it does while the
    // first answer is not yet kept): the call's Update, which starts a new run.
    const ticket = { requestId: uuidv7(), traceId: 'late-run', deadline: Date.now() + 30_000 };
    const answer = await sendCallUpdate(
      stack.api.temporal,
      stack.config.temporal.taskQueue,
      call,
      ticket,
    );
    expect(answer).toEqual({ kind: 'json', status: 200, body: first.body });
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    const [row] = await stack.db.sql<Row[]>`
      select decision, reason, response, approval_id from audit_events where id = ${ticket.requestId}`;
    expect(row?.decision).toBe('allowed');
    expect(row?.reason).toMatch(/^replayed: /);
    expect(await titlesAtTheApp(input.title)).toBe(1);
  });
});

describe('a proxy call retried with its Idempotency-Key', () => {
  it('replays the app’s answer, status, headers and body, and sends the write once', async () => {
    const key = fresh('k-proxy');
    const title = `proxied once ${key}`;
    const send = () =>
      stack.request(writer, 'POST', '/v1/proxy/acme/tasks', {
        body: { title },
        headers: { 'service-user': USER, ...keyed(key) },
      });
    const first = await send();
    expect(first.status).toBe(201);
    const before = stack.acme.demo.stats().apiRequests;
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expect(await titlesAtTheApp(title)).toBe(1);

    const other = await stack.request(writer, 'POST', '/v1/proxy/acme/tasks', {
      body: { title: `${title} but another` },
      headers: { 'service-user': USER, ...keyed(key) },
    });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused' });
  });
});

describe('across a real process restart', () => {
  let first: ServiceProcess | undefined;
  let second: ServiceProcess | undefined;

  afterAll(async () => {
    await Promise.all([first?.stop(10_000), second?.stop(10_000)]);
  }, 60_000);

  async function runThrough(api: ServiceProcess, key: string, title: string): Promise<Answer> {
    const response = await fetch(`${api.url}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: { ...bearer(writer.key), 'content-type': 'application/json', ...keyed(key) },
      body: JSON.stringify({ user: USER, input: { title } }),
    });
    return answerOf(response);
  }

  it('a retry through a new API process, after the first was killed, replays: one write', async () => {
    const key = fresh('k-restart');
    const title = `across a restart ${key}`;
    first = await startServiceProcess('api', stack.config);
    const answered = await runThrough(first, key, title);
    expect(answered.status).toBe(200);
    await first.stop(0);
    first = undefined;

    second = await startServiceProcess('api', stack.config);
    const before = stack.acme.demo.stats().apiRequests;
    const retried = await runThrough(second, key, title);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual(answered.body);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expect(await titlesAtTheApp(title)).toBe(1);
  }, 120_000);
});
