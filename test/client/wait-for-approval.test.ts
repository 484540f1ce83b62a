// `run(…, {waitForApproval})`: a held write waits for a person's decision and
// answers the approved result, run once; a rejection throws; the time running out throws the
// approval to wait on later. The client sends the call with one Idempotency-Key throughout.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ApprovalRequiredError, DeniedByPolicyError, Gatehouse } from 'gatehouse/client';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;

/** What the client sent: each request's method, path and Idempotency-Key, and the answer's status. */
interface Sent {
  method: string;
  path: string;
  key: string | null;
  /** Whether the server honoured `Prefer: wait`. */
  waited: boolean;
}

function recordingClient(sent: Sent[]): Gatehouse {
  return new Gatehouse({
    baseUrl: stack.api.url,
    apiKey: stack.key.key,
    fetch: async (request) => {
      const response = await fetch(request);
      sent.push({
        method: request.method,
        path: new URL(request.url).pathname,
        key: request.headers.get('idempotency-key'),
        waited: response.headers.has('preference-applied'),
      });
      return response;
    },
  });
}

async function titles(user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The id of the user's pending approval once the call is held (as a person's inbox shows it). */
async function pendingApproval(user: string): Promise<string> {
  for (;;) {
    const inbox = await stack.request(
      stack.approver,
      'GET',
      `/v1/approvals?status=pending&user=${user}`,
    );
    const [first] = inbox.body.data as { id: string }[];
    if (first) return first.id;
    await sleep(100);
  }
}

/** A person decides the user's held call, a moment after it is held. */
async function decideLater(user: string, decision: 'approve' | 'reject'): Promise<string> {
  const id = await pendingApproval(user);
  await sleep(1_500);
  const decided = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/${decision}`);
  expect(decided.status).toBe(200);
  return id;
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  for (const user of ['u_ann', 'u_ben', 'u_cat']) await stack.connect(user);
}, 300_000);

describe('run with waitForApproval', () => {
  it('answers the approved result of a held write, run once, with one key throughout', async () => {
    const sent: Sent[] = [];
    const gatehouse = recordingClient(sent);
    const title = `approved while waiting ${String(Date.now())}`;
    const [result, approvalId] = await Promise.all([
      gatehouse.run(
        'acme.create_task',
        { user: 'u_ann', input: { title } },
        { waitForApproval: '60s' },
      ),
      decideLater('u_ann', 'approve'),
    ]);
    expect(result).toMatchObject({ ok: true, data: { title } });
    expect((await titles('u_ann')).filter((each) => each === title)).toHaveLength(1);

    const runs = sent.filter((each) => each.path === '/v1/actions/acme.create_task/run');
    expect(new Set(runs.map((each) => each.key)).size).toBe(1);
    // No hammering: the call is sent when held and again once decided. In between, the server
    // waited on the call itself (Prefer: wait honoured), or else the client on the approval.
    expect(runs.length).toBeLessThanOrEqual(3);
    const readApproval = sent.some((each) => each.path === `/v1/approvals/${approvalId}`);
    expect(runs.some((each) => each.waited) || readApproval).toBe(true);

    // A retry of the same logical call (its key) replays the result: no second task.
    const [key] = runs.map((each) => each.key);
    const again = await gatehouse.run(
      'acme.create_task',
      { user: 'u_ann', input: { title } },
      { idempotencyKey: key ?? '' },
    );
    expect(again).toEqual(result);
    expect((await titles('u_ann')).filter((each) => each === title)).toHaveLength(1);
  });

  it('throws DeniedByPolicyError once a person rejects the call; the app is not called', async () => {
    const title = `rejected while waiting ${String(Date.now())}`;
    const [outcome, approvalId] = await Promise.all([
      recordingClient([])
        .run('acme.create_task', { user: 'u_ben', input: { title } }, { waitForApproval: '60s' })
        .catch((error: unknown) => error),
      decideLater('u_ben', 'reject'),
    ]);
    expect(outcome).toBeInstanceOf(DeniedByPolicyError);
    expect((outcome as DeniedByPolicyError).approval).toEqual({
      id: approvalId,
      status: 'rejected',
    });
    expect(await titles('u_ben')).not.toContain(title);
  });

  it('throws ApprovalRequiredError with the approval when the time is up', async () => {
    const started = Date.now();
    const outcome = await recordingClient([])
      .run(
        'acme.create_task',
        { user: 'u_cat', input: { title: 'nobody decides' } },
        { waitForApproval: '2s' },
      )
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ApprovalRequiredError);
    expect((outcome as ApprovalRequiredError).approval.status).toBe('pending');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
  });
});
