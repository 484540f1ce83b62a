import { afterAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { createSql } from '../../infra/database/client.js';
import type { CallSummary, governedCall } from '../../workflows/call.js';
import { startTestApi } from '../support/api.js';
import { answerOf, startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { childPidWith } from '../support/child-process.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase } from '../support/database.js';
import { bearer, createTestKey } from '../support/keys.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { startTestTemporal } from '../support/temporal-server.js';
import { answeredWithin } from '../support/answered-within.js';
import { eventually } from '../support/eventually.js';

/**
 * Every request is answered in bounded time while the worker, Temporal or
 * Postgres does not answer, with 503 `service_unavailable`; and a call or decision the caller
 * was told failed is never applied later. No timing is asserted beyond "an answer came": the
 * budget is far above the configured deadline, for a loaded machine.
 */
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

const DEADLINE = { REQUEST_DEADLINE_MS: '5000' };
const BUDGET_MS = 45_000;

function answered<T>(what: string, pending: Promise<T>): Promise<T> {
  return answeredWithin(what, BUDGET_MS, pending);
}

function expectUnavailable(answer: Answer, extra: Record<string, unknown> = {}): void {
  expect(answer.status).toBe(503);
  expect(answer.body.error).toMatchObject({
    code: 'service_unavailable',
    retryable: true,
    ...extra,
  });
  expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

function approvalId(answer: Answer): string {
  const error = answer.body.error as { code: string; approval?: { id: string } };
  expect(error.code).toBe('approval_required');
  return error.approval?.id ?? '';
}

/** The result of the one call workflow of `user`, once it has closed. */
async function callWorkflowOf(client: Client, user: string): Promise<CallSummary> {
  // Visibility is eventually consistent.
  const execution = await eventually(`the call workflow of ${user}`, async () => {
    for await (const found of client.workflow.list({ query: `GatehouseUser = '${user}'` })) {
      return found;
    }
    return null;
  });
  return client.workflow
    .getHandle<typeof governedCall>(execution.workflowId, execution.runId)
    .result();
}

async function runOnce(stack: CallStack, user: string, input: { title: string }): Promise<void> {
  const before = stack.acme.demo.stats().apiRequests;
  const ran = await answered('run', stack.run('acme.create_task', { user, input }));
  expect(ran.status).toBe(200);
  expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
  expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
}

describe('with the worker stopped', () => {
  it('answers a call 503 and never runs it when a worker comes back', async () => {
    const stack = await startCallStack({ env: DEADLINE });
    stops.push(() => stack.stop());
    await stack.connect('u_no_worker');
    await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
    const input = { title: 'sent while no worker ran' };
    const before = stack.acme.demo.stats().apiRequests;

    await stack.worker.stop();
    const refused = await answered(
      'run',
      stack.run('acme.create_task', { user: 'u_no_worker', input }),
    );
    expectUnavailable(refused, { call_state: 'not_started' });

    // The workflow that request started meets its late Update when a worker is back: it refuses
    // it, and ends without calling the app.
    await stack.restartWorker();
    const summary = await answered('workflow', callWorkflowOf(stack.api.temporal, 'u_no_worker'));
    expect(summary.decision).toBe('failed');
    expect(stack.acme.demo.stats().apiRequests - before).toBe(0);

    // The caller's retry runs the write, once.
    await runOnce(stack, 'u_no_worker', input);
  }, 120_000);

  it('answers a decision 503 "not applied", and the workflow refuses it when a worker is back', async () => {
    const stack = await startCallStack({ env: DEADLINE });
    stops.push(() => stack.stop());
    await stack.connect('u_no_worker_decision');
    const input = { title: 'decided while no worker ran' };
    const id = approvalId(
      await stack.run('acme.create_task', { user: 'u_no_worker_decision', input }),
    );

    await stack.worker.stop();
    const rejected = await answered(
      'reject',
      stack.request(stack.approver, 'POST', `/v1/approvals/${id}/reject`),
    );
    expectUnavailable(rejected, { decision_state: 'not_applied', approval: { id } });

    // The late rejection reaches the workflow before this approval, and is refused: the
    // approval is still open to decide.
    await stack.restartWorker();
    const approved = await answered(
      'approve',
      stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`),
    );
    expect(approved.body).toMatchObject({ id, status: 'approved' });
    await runOnce(stack, 'u_no_worker_decision', input);
  }, 120_000);
});

describe('with Temporal unreachable', () => {
  it('answers calls, decisions and readiness 503 while it is frozen, and applies nothing late', async () => {
    const server = await startTestTemporal();
    stops.push(() => server.stop());
    const stack = await startCallStack({ env: { ...DEADLINE, TEMPORAL_ADDRESS: server.address } });
    stops.push(() => stack.stop());
    await stack.connect('u_frozen');
    const input = { title: 'decided while Temporal was frozen' };
    const id = approvalId(await stack.run('acme.create_task', { user: 'u_frozen', input }));

    const pid = await childPidWith(['--port', String(server.port)]);
    process.kill(pid, 'SIGSTOP');
    let answers: [Answer, Answer, Answer];
    try {
      answers = await answered(
        'frozen Temporal',
        Promise.all([
          stack.run('acme.list_tasks', { user: 'u_frozen' }),
          stack.request(stack.approver, 'POST', `/v1/approvals/${id}/reject`),
          fetch(`${stack.api.url}/readyz`).then(answerOf),
        ]),
      );
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const [listed, rejected, ready] = answers;
    expectUnavailable(listed, { call_state: 'not_started' });
    expectUnavailable(rejected, { decision_state: 'not_applied', approval: { id } });
    expectUnavailable(ready, { checks: { postgres: 'ok', temporal: 'unreachable' } });

    // Thawed: the rejection the approver was told failed is not applied. The server may need a
    // moment to catch up; an approval it could not record in time is answered "not applied,
    // decide again", as the approver is told, and deciding again then succeeds. (Had any of these
    // been applied late, the next try would meet 409.)
    let approved = await answered(
      'approve',
      stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`),
    );
    for (let tries = 0; approved.status === 503 && tries < 5; tries++) {
      expectUnavailable(approved, { decision_state: 'not_applied', approval: { id } });
      approved = await answered(
        'approve again',
        stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`),
      );
    }
    expect(approved.body).toMatchObject({ id, status: 'approved' });
    await runOnce(stack, 'u_frozen', input);
  }, 180_000);

  it('answers a call 503, not 500, when Temporal refuses connections', async () => {
    const stack = await startCallStack({ env: DEADLINE });
    stops.push(() => stack.stop());
    await stack.connect('u_refused');
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const api = await startTestApi(stack.config, stack.db.sql, {
      temporal: new Client({ connection }),
    });
    stops.push(async () => {
      await api.close();
      await connection.close();
    });
    const answer = await answered(
      'run',
      fetch(`${api.url}/v1/actions/acme.list_tasks/run`, {
        method: 'POST',
        headers: { ...bearer(stack.key.key), 'content-type': 'application/json' },
        body: JSON.stringify({ user: 'u_refused' }),
      }).then(answerOf),
    );
    expectUnavailable(answer, { call_state: 'not_started' });
  }, 120_000);
});

describe('with Postgres unreachable', () => {
  /** An API whose Postgres connections pass through a proxy the test can freeze. */
  async function proxiedApi() {
    const db = await createTestDatabase();
    stops.push(() => db.drop());
    const direct = new URL(db.url);
    const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port) });
    stops.push(() => proxy.close());
    const proxied = new URL(db.url);
    proxied.host = `${proxy.host}:${proxy.port}`;
    const sql = createSql(proxied.toString(), {
      max: 3,
      connectTimeoutMs: 1000,
      statementTimeoutMs: 1000,
      idleInTransactionTimeoutMs: 1000,
    });
    stops.push(() => sql.end({ timeout: 1 }));
    const api = await startTestApi(testConfig(db.url, DEADLINE), sql);
    stops.push(() => api.close());
    const key = await createTestKey(db.sql, { env: 'test', access: 'full', agentId: 'test-agent' });
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${api.url}${path}`, {
        method,
        headers: { ...bearer(key.key), 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(answerOf);
    return { db, proxy, api, send };
  }

  it('answers 503 while it is frozen, and serves again once it answers', async () => {
    const { proxy, api, send } = await proxiedApi();
    expect((await send('GET', '/v1/users')).status).toBe(200);

    proxy.pause();
    let answers: [Answer, Answer, Answer];
    try {
      answers = await answered(
        'frozen Postgres',
        Promise.all([
          send('GET', '/v1/users'),
          send('POST', '/v1/actions/acme.list_tasks/run', { user: 'u_pg' }),
          fetch(`${api.url}/readyz`).then(answerOf),
        ]),
      );
    } finally {
      proxy.resume();
    }
    const [users, run, ready] = answers;
    expectUnavailable(users);
    expectUnavailable(run);
    expectUnavailable(ready, { checks: { postgres: 'unreachable', temporal: 'ok' } });
    expect(api.logs.some((line) => line.includes('a dependency did not answer'))).toBe(true);

    expect((await answered('thawed', send('GET', '/v1/users'))).status).toBe(200);
  }, 120_000);

  it('answers 503 when a statement outlasts the statement timeout', async () => {
    const { db, send } = await proxiedApi();
    expect((await send('GET', '/v1/users')).status).toBe(200);
    const released = deferred();
    const locked = deferred();
    // Every request looks its key up first: the lock makes that lookup wait.
    const holder = db.sql
      .begin(async (tx) => {
        await tx`lock table api_keys in access exclusive mode`;
        locked.resolve();
        await released.promise;
      })
      .catch(() => undefined);
    await locked.promise;
    try {
      expectUnavailable(await answered('locked', send('GET', '/v1/users')));
    } finally {
      released.resolve();
      await holder;
    }
    expect((await send('GET', '/v1/users')).status).toBe(200);
  }, 60_000);
});
