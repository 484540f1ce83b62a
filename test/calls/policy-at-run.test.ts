import { beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { receiveWebhooks, type Receiver } from '../support/webhook-receiver.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

/**
 * Approvals outlive the policy that raised them. An approved call is checked again
 * against the policy in force when it runs: a newer version that denies it wins; one that allows
 * it lets it run. Pending approvals show what the policy in force would decide now.
 */
let stack: CallStack;
/** Agent `cleaner`, governed by policy `cleaning`, which this file rewrites. */
let cleaner: TestKey;
let receiver: Receiver;
let secret: string;

interface PolicyInForce {
  id: string;
  version: number;
  decision: string;
  rule: string;
}

async function setCleaningPolicy(
  defaults: Record<'read' | 'write' | 'destructive', string>,
  rules: object[] = [],
): Promise<number> {
  const answer = await stack.request(stack.key, 'PUT', '/v1/policies/cleaning', {
    body: { name: 'Cleaning', agents: ['cleaner'], defaults, rules },
  });
  expect(answer.status).toBe(200);
  return (answer.body as { version: number }).version;
}

function approvalIdOf(answer: Answer): string {
  const error = answer.body.error as { code?: string; approval?: { id: string } } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(`expected approval_required: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return error.approval.id;
}

async function createTask(user: string, title: string): Promise<string> {
  const answer = await stack.run('acme.create_task', { user, input: { title } }, { key: cleaner });
  if (answer.status !== 200) throw new Error(`create failed: ${JSON.stringify(answer.body)}`);
  return ((answer.body.data as { id: string } | undefined) ?? { id: '' }).id;
}

function proxyDelete(user: string, taskId: string): Promise<Answer> {
  return stack.request(cleaner, 'DELETE', `/v1/proxy/acme/tasks/${taskId}`, {
    headers: { 'service-user': user },
  });
}

async function taskExists(user: string, taskId: string): Promise<boolean> {
  const answer = await stack.request(stack.approver, 'GET', `/v1/proxy/acme/tasks/${taskId}`, {
    headers: { 'service-user': user },
  });
  return answer.status === 200;
}

async function decidedDelivery(approvalId: string) {
  const ours = () =>
    receiver.deliveries.filter((d) => d.headers['webhook-id'] === `evt_${approvalId}`);
  const [delivery] = await eventually('approval.decided delivered', () =>
    ours().length > 0 ? ours() : null,
  );
  if (!delivery) throw new Error('approval.decided was not delivered');
  return new Webhook(secret).verify(delivery.body, delivery.headers) as {
    data: { approval: { id: string; status: string; policy_in_force: PolicyInForce } };
  };
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_clean');
  cleaner = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'cleaner' });
  ({ receiver, secret } = await receiveWebhooks(stack));
  started.add(receiver);
});

describe('an approved call meets the policy in force when it runs', () => {
  it('a held proxy DELETE whose policy now denies it is refused after approval, and never sent', async () => {
    const asked = await setCleaningPolicy({ read: 'allow', write: 'allow', destructive: 'ask' });
    const taskId = await createTask('u_clean', `doomed ${String(Date.now())}`);
    const approvalId = approvalIdOf(await proxyDelete('u_clean', taskId));

    const denying = await setCleaningPolicy({ read: 'allow', write: 'allow', destructive: 'deny' });
    expect(denying).toBe(asked + 1);
    // The inbox says the approval would now be denied, before anyone decides.
    const pending = await stack.request(stack.approver, 'GET', `/v1/approvals/${approvalId}`);
    expect(pending.body).toMatchObject({
      status: 'pending',
      policy: { id: 'cleaning', version: asked },
      policy_in_force: { id: 'cleaning', version: denying, decision: 'deny' },
    });
    const listed = await stack.request(stack.approver, 'GET', '/v1/approvals?status=pending');
    const item = (listed.body.data as { id: string; policy_in_force: PolicyInForce }[]).find(
      (approval) => approval.id === approvalId,
    );
    expect(item?.policy_in_force).toMatchObject({ version: denying, decision: 'deny' });

    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.status).toBe(200);
    const decided = await decidedDelivery(approvalId);
    expect(decided.data.approval.policy_in_force).toMatchObject({
      id: 'cleaning',
      version: denying,
      decision: 'deny',
    });

    const before = stack.acme.demo.stats().apiRequests;
    const retry = await proxyDelete('u_clean', taskId);
    expect(retry.status).toBe(403);
    expect(retry.body.error).toMatchObject({
      code: 'denied_by_policy',
      approval: { id: approvalId },
    });
    expect((retry.body.error as { message: string }).message).toContain(
      `policy cleaning v${String(denying)}`,
    );
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expect(await taskExists('u_clean', taskId)).toBe(true);

    const [row] = await stack.db.sql<
      { decision: string; approvalId: string; reason: string; policyVersion: number }[]
    >`
      select decision, approval_id, reason, policy_version from audit_events
      where trace_id = ${retry.headers.get('x-trace-id') ?? ''}`;
    expect(row).toMatchObject({ decision: 'denied', approvalId, policyVersion: denying });
    expect(row?.reason).toContain(`policy cleaning v${String(denying)}`);

    // Spent: the same call again is judged afresh, and denied outright.
    const again = await proxyDelete('u_clean', taskId);
    expect(again.status).toBe(403);
    expect(again.body.error).toMatchObject({ code: 'denied_by_policy' });
    expect(await taskExists('u_clean', taskId)).toBe(true);
  });

  it('an approved call whose policy now allows it without asking runs, once', async () => {
    await setCleaningPolicy({ read: 'allow', write: 'allow', destructive: 'ask' });
    const taskId = await createTask('u_clean', `allowed later ${String(Date.now())}`);
    const approvalId = approvalIdOf(await proxyDelete('u_clean', taskId));
    const allowing = await setCleaningPolicy({
      read: 'allow',
      write: 'allow',
      destructive: 'allow',
    });
    const pending = await stack.request(stack.approver, 'GET', `/v1/approvals/${approvalId}`);
    expect(pending.body).toMatchObject({
      policy_in_force: { id: 'cleaning', version: allowing, decision: 'allow' },
    });
    await stack.request(stack.approver, 'POST', `/v1/approvals/${approvalId}/approve`);
    const before = stack.acme.demo.stats().apiRequests;
    const retry = await proxyDelete('u_clean', taskId);
    expect(retry.status).toBe(204);
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect(await taskExists('u_clean', taskId)).toBe(false);
    const [row] = await stack.db.sql<{ decision: string; policyVersion: number }[]>`
      select decision, policy_version from audit_events
      where trace_id = ${retry.headers.get('x-trace-id') ?? ''}`;
    expect(row).toEqual({ decision: 'allowed', policyVersion: allowing });
  });

  it('an action approved under ask still runs when the policy in force still asks', async () => {
    const version = await setCleaningPolicy({ read: 'allow', write: 'ask', destructive: 'ask' });
    const input = { title: `still asks ${String(Date.now())}` };
    const run = () => stack.run('acme.create_task', { user: 'u_clean', input }, { key: cleaner });
    const approvalId = approvalIdOf(await run());
    const pending = await stack.request(stack.approver, 'GET', `/v1/approvals/${approvalId}`);
    expect(pending.body).toMatchObject({
      policy_in_force: { id: 'cleaning', version, decision: 'ask' },
    });
    await stack.request(stack.approver, 'POST', `/v1/approvals/${approvalId}/approve`);
    const ran = await run();
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
  });
});
