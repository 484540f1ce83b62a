import { beforeAll, describe, expect, it } from '@jest/globals';
import type { CallAnswer, CallRequest } from '../../workflows/call-types.js';
import { actionCallRequest, sendCallUpdate } from '../support/call-update.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

/**
 * Every caller's audit row says what that caller was answered, under any
 * interleaving. Each answer is matched to its row by the trace id the API returns
 * (`X-Trace-Id`) and records (`trace_id`), one caller at a time.
 */
let stack: CallStack;
/** Agent `writer`, governed by a policy that allows writes without asking. */
let writer: TestKey;

interface Row {
  decision: string;
  approvalId: string | null;
  response: Record<string, unknown> | null;
  reason: string | null;
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_many');
  writer = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'writer' });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/writers', {
    body: {
      name: 'Writes allowed',
      agents: ['writer'],
      defaults: { read: 'allow', write: 'allow', destructive: 'deny' },
    },
  });
  expect(policy.status).toBe(200);
});

async function rowsOf(traceId: string): Promise<Row[]> {
  return stack.db.sql<Row[]>`
    select decision, approval_id, response, reason from audit_events where trace_id = ${traceId}`;
}

/** What the audit row of a caller must say, given what the caller was answered. */
function expectRowMatches(answer: Answer, rows: Row[]): void {
  const context = JSON.stringify({ status: answer.status, body: answer.body, rows });
  expect([context, rows.length]).toEqual([context, 1]);
  const [row] = rows as [Row];
  const error = answer.body.error as
    { code: string; approval?: { id: string; status: string } } | undefined;
  if (answer.status === 200) {
    expect([context, row.decision]).toEqual([context, 'allowed']);
    expect([context, row.response?.data]).toEqual([context, answer.body.data]);
    return;
  }
  switch (error?.code) {
    case 'approval_required':
      expect([context, row.decision, row.approvalId]).toEqual([
        context,
        'blocked',
        error.approval?.id,
      ]);
      expect(row.response).toBeNull();
      return;
    case 'denied_by_policy':
      expect([context, row.decision]).toEqual([context, 'denied']);
      expect(row.response).toBeNull();
      return;
    default:
      // Anything else the service answers is a call it stopped: `failed`, and not run.
      expect([context, row.decision]).toEqual([context, 'failed']);
  }
}

async function approve(id: string): Promise<void> {
  const decided = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`);
  expect(decided.status).toBe(200);
}

function approvalIdOf(answer: Answer): string {
  const error = answer.body.error as { code?: string; approval?: { id: string } } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(`expected approval_required: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return error.approval.id;
}

describe('answers and audit rows', () => {
  it('12 identical runs right after an approval: each row says what its caller was told', async () => {
    for (let round = 0; round < 4; round++) {
      const input = { title: `crowd ${String(round)} ${String(Date.now())}` };
      const run = () => stack.run('acme.create_task', { user: 'u_many', input });
      const held = await run();
      await approve(approvalIdOf(held));

      const before = stack.acme.demo.stats().apiRequests;
      const answers = await Promise.all(Array.from({ length: 12 }, run));
      // The approved write ran once, whatever else happened.
      expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
      expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(1);
      for (const answer of [held, ...answers]) {
        expectRowMatches(answer, await rowsOf(answer.headers.get('x-trace-id') ?? ''));
      }
    }
  });

  it('runs racing a decision: each row says what its caller was told', async () => {
    for (let round = 0; round < 3; round++) {
      const input = { title: `race ${String(round)} ${String(Date.now())}` };
      const run = () => stack.run('acme.create_task', { user: 'u_many', input });
      const held = await run();
      const racing = Array.from({ length: 12 }, (_, i) =>
        new Promise((resolve) => setTimeout(resolve, i * 5)).then(run),
      );
      await approve(approvalIdOf(held));
      const answers = await Promise.all(racing);
      for (const answer of answers) {
        expectRowMatches(answer, await rowsOf(answer.headers.get('x-trace-id') ?? ''));
      }
    }
  });

  it('12 identical first calls in parallel share one approval, each audited blocked', async () => {
    const input = { title: `first crowd ${String(Date.now())}` };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => stack.run('acme.create_task', { user: 'u_many', input })),
    );
    const ids = new Set(answers.map(approvalIdOf));
    expect(ids.size).toBe(1);
    for (const answer of answers) {
      expectRowMatches(answer, await rowsOf(answer.headers.get('x-trace-id') ?? ''));
    }
  });
});

/** The call the API makes of `POST /v1/actions/acme.create_task/run` for this agent and input. */
function createTaskCall(agentId: string, input: { title: string }): CallRequest {
  return actionCallRequest(stack, {
    agentId,
    user: 'u_many',
    action: 'acme.create_task',
    scope: 'write',
    input,
  });
}

/** The answered request sent to Temporal again, with the same Update id (see sendCallUpdate). */
function resend(call: CallRequest, answered: Answer, requestId: string): Promise<CallAnswer> {
  const ticket = {
    requestId,
    traceId: answered.headers.get('x-trace-id') ?? '',
    deadline: Date.now() + 30_000,
  };
  return sendCallUpdate(stack.api.temporal, stack.config.temporal.taskQueue, call, ticket);
}

/** The request id (= audit event id) the API gave the request answered with this trace id. */
async function requestIdOf(answer: Answer): Promise<string> {
  const [row] = await stack.db.sql<{ id: string }[]>`
    select id from audit_events where trace_id = ${answer.headers.get('x-trace-id') ?? ''}`;
  if (!row) throw new Error('no audit row for this answer');
  return row.id;
}

/**
 * A request whose answer was lost on its way back (a dropped connection, an RPC deadline) is
 * sent to Temporal again with the same Update id, by the SDK's own loop or by the API's retry.
 * If the run that answered it has closed meanwhile, update-with-start lands it in a new run.
 */
describe('a request sent again after the run that answered it closed', () => {
  it('an approved write: the same answer comes back, nothing runs or is asked again', async () => {
    const input = { title: `resent approved ${String(Date.now())}` };
    const held = await stack.run('acme.create_task', { user: 'u_many', input });
    await approve(approvalIdOf(held));
    const ran = await stack.run('acme.create_task', { user: 'u_many', input });
    expect(ran.status).toBe(200);
    const requestId = await requestIdOf(ran);
    const before = stack.acme.demo.stats().apiRequests;
    const again = await resend(createTaskCall('test-agent', input), ran, requestId);
    expect(again).toEqual({ kind: 'json', status: 200, body: ran.body });
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    const approvals = await stack.db.sql`
      select id from approvals where request->'input'->>'title' = ${input.title}`;
    expect(approvals).toHaveLength(1);
    expectRowMatches(ran, await rowsOf(ran.headers.get('x-trace-id') ?? ''));
  });

  it('an allowed write: it is not sent to the app a second time', async () => {
    const input = { title: `resent allowed ${String(Date.now())}` };
    const ran = await stack.run('acme.create_task', { user: 'u_many', input }, { key: writer });
    expect(ran.status).toBe(200);
    const requestId = await requestIdOf(ran);
    const before = stack.acme.demo.stats().apiRequests;
    const again = await resend(createTaskCall('writer', input), ran, requestId);
    expect(again).toEqual({ kind: 'json', status: 200, body: ran.body });
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expectRowMatches(ran, await rowsOf(ran.headers.get('x-trace-id') ?? ''));
  });

  it('after another caller has opened a new run of the same call: the first answer, no second write', async () => {
    const input = { title: `resent into a new run ${String(Date.now())}` };
    const held = await stack.run('acme.create_task', { user: 'u_many', input });
    await approve(approvalIdOf(held));
    const ran = await stack.run('acme.create_task', { user: 'u_many', input });
    expect(ran.status).toBe(200);
    // Another identical call (no Idempotency-Key) after the approved one ran: a new run, held.
    const next = await stack.run('acme.create_task', { user: 'u_many', input });
    const nextApproval = approvalIdOf(next);
    const requestId = await requestIdOf(ran);
    const before = stack.acme.demo.stats().apiRequests;
    const again = await resend(createTaskCall('test-agent', input), ran, requestId);
    expect(again).toEqual({ kind: 'json', status: 200, body: ran.body });
    // Approving the new run's approval and retrying runs it once more: only then.
    await approve(nextApproval);
    const resentAgain = await resend(createTaskCall('test-agent', input), ran, requestId);
    expect(resentAgain).toEqual({ kind: 'json', status: 200, body: ran.body });
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expectRowMatches(ran, await rowsOf(ran.headers.get('x-trace-id') ?? ''));
  });

  it('an allowed write resent into a run another caller opened: not sent twice', async () => {
    const input = { title: `resent allowed into a new run ${String(Date.now())}` };
    const ran = await stack.run('acme.create_task', { user: 'u_many', input }, { key: writer });
    expect(ran.status).toBe(200);
    const requestId = await requestIdOf(ran);
    const call = createTaskCall('writer', input);
    // Another caller's identical write, slowed at the app, keeps a new run open meanwhile: once
    // it has reached the app, the run is open.
    stack.acme.demo.faults.set({ mode: 'slow', delayMs: 3000, times: 1 });
    const atTheApp = stack.acme.demo.stats().apiRequests;
    const other = stack.run('acme.create_task', { user: 'u_many', input }, { key: writer });
    await eventually('the other write at the app', () =>
      stack.acme.demo.stats().apiRequests > atTheApp ? true : null,
    );
    const before = stack.acme.demo.stats().apiRequests;
    const again = await resend(call, ran, requestId);
    expect(again).toEqual({ kind: 'json', status: 200, body: ran.body });
    expect((await other).status).toBe(200);
    stack.acme.demo.faults.reset();
    // The other caller's write is its own (no key tells the two apart); the resent one added none.
    expect(stack.acme.demo.stats().apiRequests - before).toBeLessThanOrEqual(1);
    expectRowMatches(ran, await rowsOf(ran.headers.get('x-trace-id') ?? ''));
  });
});
