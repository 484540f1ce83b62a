import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

/**
 * A governed call may wait for its approval's decision (`Prefer: wait=<s>`). The wait
 * lives in the call workflow; the answer is the approved call's result, run once, a rejection,
 * or at the end of the wait the usual approval_required. Many waiters never crowd the workflow's
 * Update slots, and `GET /v1/approvals/{id}` waits the same way.
 */
let stack: CallStack;
/** Agent `waiter`, governed by the default policy (writes ask). */
let waiter: TestKey;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function createTask(title: string, prefer?: string): Promise<Answer> {
  return stack.run(
    'acme.create_task',
    { user: 'u_wait', input: { title } },
    { key: waiter, ...(prefer === undefined ? {} : { headers: { prefer } }) },
  );
}

/** The pending approval of the call with this title, once the call has been held. */
async function heldApproval(title: string): Promise<string> {
  const row = await eventually(
    `the call titled ${title} held`,
    async () => {
      const [pending] = await stack.db.sql<{ id: string }[]>`
      select id from approvals where status = 'pending' and request->'input'->>'title' = ${title}`;
      return pending;
    },
    50,
  );
  return row.id;
}

async function decide(approvalId: string, verb: 'approve' | 'reject'): Promise<void> {
  const answer = await stack.request(stack.approver, 'POST', `/v1/approvals/${approvalId}/${verb}`);
  expect(answer.status).toBe(200);
}

async function tasksTitled(title: string): Promise<number> {
  const answer = await stack.run('acme.list_tasks', { user: 'u_wait', input: {} });
  const { tasks } = answer.body.data as { tasks: { title: string }[] };
  return tasks.filter((task) => task.title === title).length;
}

async function auditOf(title: string) {
  return stack.db.sql<{ decision: string; reason: string }[]>`
    select decision, reason from audit_events
    where request->'input'->>'title' = ${title} order by id`;
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_wait');
  waiter = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'waiter' });
});

describe('Prefer: wait on a held call', () => {
  it('answers with the approved call’s result, run once', async () => {
    const title = `waited ${String(Date.now())}`;
    const pending = createTask(title, 'wait=30');
    await decide(await heldApproval(title), 'approve');
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('preference-applied')).toBe('wait=30');
    expect(answer.body.data).toMatchObject({ title });
    expect(await tasksTitled(title)).toBe(1);
    // The hold and the run, each audited.
    expect((await auditOf(title)).map((row) => row.decision)).toEqual(['blocked', 'allowed']);
  });

  it('answers denied_by_policy when the approval is rejected, and nothing runs', async () => {
    const title = `rejected ${String(Date.now())}`;
    const pending = createTask(title, 'respond-async, wait=30');
    await decide(await heldApproval(title), 'reject');
    const answer = await pending;
    expect(answer.status).toBe(403);
    expect((answer.body.error as { code: string }).code).toBe('denied_by_policy');
    expect(await tasksTitled(title)).toBe(0);
  });

  it('answers approval_required when the wait ends first, and the call never runs behind it', async () => {
    const title = `undecided ${String(Date.now())}`;
    const answer = await createTask(title, 'wait=1');
    expect(answer.status).toBe(403);
    expect(answer.headers.get('preference-applied')).toBe('wait=1');
    const error = answer.body.error as { code: string; approval: { id: string } };
    expect(error.code).toBe('approval_required');
    // Approved after the caller was answered: nothing runs until the caller retries.
    await decide(error.approval.id, 'approve');
    await sleep(1500);
    expect(await tasksTitled(title)).toBe(0);
    const retried = await createTask(title);
    expect(retried.status).toBe(200);
    expect(await tasksTitled(title)).toBe(1);
  });

  it('caps the wait at the configured maximum and ignores a preference it cannot read', async () => {
    const title = `capped ${String(Date.now())}`;
    const pending = createTask(title, 'wait=100000');
    await decide(await heldApproval(title), 'approve');
    const answer = await pending;
    expect(answer.headers.get('preference-applied')).toBe(
      `wait=${String(stack.config.requests.maxWaitSeconds)}`,
    );
    const odd = await createTask(`odd ${String(Date.now())}`, 'wait=soon');
    expect(odd.status).toBe(403);
    expect(odd.headers.get('preference-applied')).toBeNull();
  });

  it('serves 50 callers waiting on one held call with one run, each audited', async () => {
    const title = `crowd ${String(Date.now())}`;
    // The first call opens the approval; the others are identical calls that wait on it.
    const first = createTask(title, 'wait=60');
    const approvalId = await heldApproval(title);
    const crowd = Array.from({ length: 49 }, () => createTask(title, 'wait=60'));
    // Every caller is held (audited as blocked) before the decision, and then waits: a caller
    // still on its way when it is decided would be no waiter (under load, 2 s was not enough).
    await eventually('all 50 callers held', async () =>
      (await auditOf(title)).filter((row) => row.decision === 'blocked').length >= 50 ? true : null,
    );
    await decide(approvalId, 'approve');
    const answers = await Promise.all([first, ...crowd]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const ids = new Set(answers.map((a) => (a.body.data as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(await tasksTitled(title)).toBe(1);
    const rows = await auditOf(title);
    // Every request has its hold and its answer; one of them ran the call.
    expect(rows.filter((row) => row.decision === 'blocked')).toHaveLength(50);
    expect(rows.filter((row) => row.decision === 'allowed')).toHaveLength(50);
    expect(rows.filter((row) => row.reason.startsWith('waited with request'))).toHaveLength(49);
  }, 120_000);
});

describe('Prefer: wait through the proxy', () => {
  it('waits on the same call as without it: the wait preference is not the app’s', async () => {
    const title = `proxied ${String(Date.now())}`;
    const send = (prefer?: string) =>
      stack.request(waiter, 'POST', '/v1/proxy/acme/tasks', {
        headers: { 'service-user': 'u_wait', ...(prefer === undefined ? {} : { prefer }) },
        body: { title },
      });
    const held = await send();
    expect(held.status).toBe(403);
    const approvalId = (held.body.error as { approval: { id: string } }).approval.id;
    const waiting = send('wait=30');
    await sleep(500);
    await decide(approvalId, 'approve');
    const answer = await waiting;
    expect(answer.status).toBe(201);
    expect(answer.headers.get('preference-applied')).toBe('wait=30');
    expect(await tasksTitled(title)).toBe(1);
    const [approval] = await stack.db.sql<{ request: { headers: Record<string, string> } }[]>`
      select request from approvals where id = ${approvalId}`;
    expect(Object.keys(approval?.request.headers ?? {})).not.toContain('prefer');
  });
});

describe('Prefer: wait on GET /v1/approvals/{id}', () => {
  it('answers once the approval is decided, or as it is at the end of the wait', async () => {
    const title = `watched ${String(Date.now())}`;
    const held = await createTask(title);
    const approvalId = (held.body.error as { approval: { id: string } }).approval.id;

    const unchanged = await stack.request(stack.approver, 'GET', `/v1/approvals/${approvalId}`, {
      headers: { prefer: 'wait=1' },
    });
    expect(unchanged.body).toMatchObject({ id: approvalId, status: 'pending' });
    expect(unchanged.headers.get('preference-applied')).toBe('wait=1');

    const watching = stack.request(waiter, 'GET', `/v1/approvals/${approvalId}`, {
      headers: { prefer: 'wait=30' },
    });
    await sleep(500);
    await decide(approvalId, 'approve');
    const decided = await watching;
    expect(decided.body).toMatchObject({ id: approvalId, status: 'approved' });
  });
});
