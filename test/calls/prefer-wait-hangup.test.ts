import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A caller waiting with `Prefer: wait` for a held write hangs up before anyone decides. The
 * approval must not make the write run behind its back: nobody would receive the app's answer,
 * and the caller's identical retry would meet a fresh approval and write a second time. So the
 * approved call waits for the caller's retry, as it does for a caller that never waited, and one
 * approval leads to exactly one write.
 */
let stack: CallStack;
let waiter: TestKey;

const USER = 'u_hangup';

function createTask(title: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${stack.api.url}/v1/actions/acme.create_task/run`, {
    method: 'POST',
    headers: { ...bearer(waiter.key), 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ user: USER, input: { title } }),
    ...(signal ? { signal } : {}),
  });
}

/** Polls for a condition the service reaches on its own; fails with `what` if it never does. */
async function until<T>(what: string, probe: () => Promise<T | null | undefined>): Promise<T> {
  for (let tries = 0; tries < 400; tries++) {
    const found = await probe();
    if (found !== null && found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

function pendingApproval(title: string): Promise<string> {
  return until(`the call titled ${title} is held`, async () => {
    const [row] = await stack.db.sql<{ id: string }[]>`
      select id from approvals where status = 'pending' and request->'input'->>'title' = ${title}`;
    return row?.id;
  });
}

/** The API's own word that it stopped waiting for a caller that hung up. */
function callerGone(approvalId: string): Promise<string> {
  return until(`the API notices the caller of ${approvalId} hung up`, () =>
    Promise.resolve(
      stack.api.logs.find((line) => line.includes('caller hung up') && line.includes(approvalId)),
    ),
  );
}

async function tasksTitled(title: string): Promise<number> {
  const answer = await stack.run('acme.list_tasks', { user: USER, input: {} });
  const { tasks } = answer.body.data as { tasks: { title: string }[] };
  return tasks.filter((task) => task.title === title).length;
}

async function decide(approvalId: string): Promise<void> {
  const answer = await stack.request(stack.approver, 'POST', `/v1/approvals/${approvalId}/approve`);
  expect(answer.status).toBe(200);
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect(USER);
  waiter = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'waiter' });
});

describe('a caller that hung up while waiting for a decision', () => {
  it('is not written for: the approved call runs once, for its retry', async () => {
    const title = `hung up ${String(Date.now())}`;
    const hangUp = new AbortController();
    const waiting = createTask(title, { prefer: 'wait=60' }, hangUp.signal).catch(
      (error: unknown) => error,
    );
    const approvalId = await pendingApproval(title);
    hangUp.abort();
    await waiting;
    await callerGone(approvalId);

    await decide(approvalId);
    // The decision is recorded and nobody waits any more: the app has heard nothing.
    expect(await tasksTitled(title)).toBe(0);

    // The caller's identical retry, with no Idempotency-Key, is the one that runs.
    const retried = await createTask(title);
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as { data: { title: string } }).data.title).toBe(title);
    expect(await tasksTitled(title)).toBe(1);

    const approvals = await stack.db.sql<{ id: string; status: string }[]>`
      select id, status from approvals where request->'input'->>'title' = ${title}`;
    expect(approvals).toEqual([{ id: approvalId, status: 'approved' }]);
    const audit = await stack.db.sql<{ decision: string }[]>`
      select decision from audit_events where request->'input'->>'title' = ${title} order by seq`;
    expect(audit.map((row) => row.decision)).toEqual(['blocked', 'allowed']);
  });

  it('still runs once for the callers that stayed, when one of them hung up', async () => {
    const title = `half left ${String(Date.now())}`;
    const hangUp = new AbortController();
    const leaving = createTask(title, { prefer: 'wait=60' }, hangUp.signal).catch(
      (error: unknown) => error,
    );
    const approvalId = await pendingApproval(title);
    const staying = createTask(title, { prefer: 'wait=60' });
    // The second caller is held on the same approval before the first leaves.
    await until('both callers are held', async () => {
      const [row] = await stack.db.sql<{ count: number }[]>`
        select count(*)::int as count from audit_events
        where decision = 'blocked' and request->'input'->>'title' = ${title}`;
      return row && row.count === 2 ? row : null;
    });
    hangUp.abort();
    await leaving;
    await callerGone(approvalId);

    await decide(approvalId);
    const answer = await staying;
    expect(answer.status).toBe(200);
    expect(await tasksTitled(title)).toBe(1);
  });
});
