import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startReceiver } from '../support/webhook-receiver.js';

let stack: CallStack;
let readOnly: TestKey;
let business: TestKey;
let readScopeOnly: TestKey;
/** Governed by policy `quick`, whose approvals expire after 2 seconds. */
let quick: TestKey;

interface ApprovalRef {
  id: string;
  status: string;
  requested_from: string[];
  expires_at: string;
}

function approvalOf(answer: Answer): ApprovalRef {
  const error = answer.body.error as { code: string; approval?: ApprovalRef } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(
      `expected approval_required, got ${answer.status} ${JSON.stringify(answer.body)}`,
    );
  }
  return error.approval;
}

const codeOf = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code;

async function titles(user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  stack = await startCallStack();
  for (const user of ['u_ann', 'u_ben', 'u_cat', 'u_dan', 'u_eve', 'u_fay', 'u_gus']) {
    await stack.connect(user);
  }
  readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
  business = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    audience: 'business',
    agentId: 'dashboard',
  });
  readScopeOnly = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    scopes: ['approvals:read'],
  });
  quick = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'quick-bot' });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/quick', {
    body: {
      name: 'Quick approvals',
      agents: ['quick-bot'],
      defaults: { read: 'allow', write: 'ask', destructive: 'ask' },
      approval: { requested_from: ['ops@example.com'], ttl_seconds: 2 },
    },
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await stack.stop();
});

describe('a held call', () => {
  it('gets one approval, approved once, and runs exactly once on retry', async () => {
    const input = { title: `approved ${String(Date.now())}` };
    const first = approvalOf(await stack.run('acme.create_task', { user: 'u_ann', input }));
    expect(first).toMatchObject({ status: 'pending', requested_from: [] });
    expect(Date.parse(first.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);

    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${first.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      id: first.id,
      status: 'pending',
      action: 'acme.create_task',
      scope: 'write',
      agent_id: 'test-agent',
      user: 'u_ann',
      request: { action: 'acme.create_task', user: 'u_ann', via: 'api', input },
      decided_by: null,
      decided_at: null,
    });
    expect(await titles('u_ann')).not.toContain(input.title);

    const approved = await stack.request(stack.key, 'POST', `/v1/approvals/${first.id}/approve`);
    expect(approved.body).toEqual({ id: first.id, status: 'approved', decided_by: 'test-agent' });
    const twice = await stack.request(stack.key, 'POST', `/v1/approvals/${first.id}/reject`);
    expect(twice.status).toBe(409);

    const ran = await stack.run('acme.create_task', { user: 'u_ann', input });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect((await titles('u_ann')).filter((title) => title === input.title)).toHaveLength(1);

    // The approval is spent: the same call again asks anew.
    const next = approvalOf(await stack.run('acme.create_task', { user: 'u_ann', input }));
    expect(next.id).not.toBe(first.id);
    const after = await stack.request(stack.key, 'GET', `/v1/approvals/${first.id}`);
    expect(after.body).toMatchObject({ status: 'approved', decided_by: 'test-agent' });
    expect(after.body.decided_at).toEqual(expect.any(String));
  });

  it('rejected: identical calls are denied naming the approval until it expires', async () => {
    const input = { title: 'rejected one' };
    const held = approvalOf(await stack.run('acme.create_task', { user: 'u_ben', input }));
    const rejected = await stack.request(stack.key, 'POST', `/v1/approvals/${held.id}/reject`);
    expect(rejected.body).toEqual({ id: held.id, status: 'rejected', decided_by: 'test-agent' });
    const retry = await stack.run('acme.create_task', { user: 'u_ben', input });
    expect(retry.status).toBe(403);
    expect(retry.body.error).toMatchObject({
      code: 'denied_by_policy',
      approval: { id: held.id, status: 'rejected' },
    });
    expect(await titles('u_ben')).not.toContain(input.title);
  });

  it('expired: status expired, deciding is 409, and the next call raises a new approval', async () => {
    const input = { title: 'too late' };
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_cat', input }, { key: quick }),
    );
    expect(held.requested_from).toEqual(['ops@example.com']);
    await sleep(2500);
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${held.id}`);
    expect(view.body.status).toBe('expired');
    const late = await stack.request(stack.key, 'POST', `/v1/approvals/${held.id}/approve`);
    expect(late.status).toBe(409);
    expect(codeOf(late)).toBe('conflict');
    const fresh = approvalOf(
      await stack.run('acme.create_task', { user: 'u_cat', input }, { key: quick }),
    );
    expect(fresh.id).not.toBe(held.id);
    // The workflow itself recorded the expiry.
    const [row] = await stack.db.sql<{ status: string }[]>`
      select status from approvals where id = ${held.id}`;
    expect(row?.status).toBe('expired');
  });

  it('50 concurrent identical calls share one approval; 5 retries after approval write once', async () => {
    const input = { title: `crowd ${String(Date.now())}` };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => stack.run('acme.create_task', { user: 'u_dan', input })),
    );
    const ids = new Set(answers.map((answer) => approvalOf(answer).id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as [string];
    const [count] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from approvals where user_external_id = 'u_dan'`;
    expect(count?.n).toBe(1);
    const [audited] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from audit_events where user_external_id = 'u_dan' and decision = 'blocked'`;
    expect(audited?.n).toBe(50);

    expect((await stack.request(stack.key, 'POST', `/v1/approvals/${id}/approve`)).status).toBe(
      200,
    );
    const before = stack.acme.demo.stats().apiRequests;
    const retries = await Promise.all(
      Array.from({ length: 5 }, () => stack.run('acme.create_task', { user: 'u_dan', input })),
    );
    const ran = retries.filter((answer) => answer.status === 200);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    for (const answer of ran)
      expect(answer.body).toMatchObject({ ok: true, data: { title: input.title } });
    // Late retries met a closed call and were held anew; none reached the app.
    for (const answer of retries.filter((a) => a.status !== 200)) {
      expect(codeOf(answer)).toBe('approval_required');
    }
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect((await titles('u_dan')).filter((title) => title === input.title)).toHaveLength(1);
  });
});

describe('deciding', () => {
  it('needs approvals:decide', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_eve', input: { title: 'scoped' } }),
    );
    for (const key of [readOnly, readScopeOnly]) {
      const answer = await stack.request(key, 'POST', `/v1/approvals/${held.id}/approve`);
      expect(answer.status).toBe(403);
      expect(codeOf(answer)).toBe('insufficient_access');
    }
    const view = await stack.request(readScopeOnly, 'GET', `/v1/approvals/${held.id}`);
    expect(view.body.status).toBe('pending');
  });

  it('answers a business key in the management shape, and decides through /decision', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_fay', input: { title: 'managed' } }),
    );
    const view = await stack.request(business, 'GET', `/v1/approvals/${held.id}`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ id: held.id, status: 'pending' });

    const bad = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'maybe' },
    });
    expect(bad.status).toBe(400);
    const denied = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'deny' },
    });
    expect(denied.status).toBe(200);
    expect(denied.body.data).toMatchObject({
      id: held.id,
      status: 'rejected',
      decided_by: 'dashboard',
    });
    const again = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'approve' },
    });
    expect(again.status).toBe(409);
  });

  it.each([
    ['not-a-uuid', 400],
    ['019a0000-0000-7000-8000-000000000000', 404],
  ])('GET /v1/approvals/%s → %i', async (id, status) => {
    const answer = await stack.request(stack.key, 'GET', `/v1/approvals/${id}`);
    expect(answer.status).toBe(status);
  });
});

describe('approval.decided', () => {
  it('is delivered signed when an approval is decided, once per approval', async () => {
    const receiver = await startReceiver();
    try {
      const secret = generateWebhookSecret();
      const set = await stack.request(stack.key, 'PUT', '/v1/webhook-endpoint', {
        body: { url: receiver.url, secret },
      });
      expect(set.status).toBe(200);
      const held = approvalOf(
        await stack.run('acme.create_task', { user: 'u_eve', input: { title: 'announced' } }),
      );
      await stack.request(stack.key, 'POST', `/v1/approvals/${held.id}/approve`);
      // Earlier decisions of this file may be delivered too: this endpoint now gets them all.
      const ours = () =>
        receiver.deliveries.filter((d) => d.headers['webhook-id'] === `evt_${held.id}`);
      for (let tries = 0; tries < 50 && ours().length === 0; tries++) await sleep(100);
      await sleep(300);
      expect(ours()).toHaveLength(1);
      const [delivery] = ours();
      const payload = new Webhook(secret).verify(delivery?.body ?? '', delivery?.headers ?? {}) as {
        type: string;
        data: { approval: { id: string; status: string; decided_by: string } };
      };
      expect(payload.type).toBe('approval.decided');
      expect(payload.data.approval).toMatchObject({
        id: held.id,
        status: 'approved',
        decided_by: 'test-agent',
      });
    } finally {
      await stack.request(stack.key, 'DELETE', '/v1/webhook-endpoint');
      await receiver.close();
    }
  });
});

describe('the retry window after approval', () => {
  it('lapses: a call retried too late is asked anew and the approval is never used', async () => {
    const brief = await startCallStack({ env: { APPROVED_RETRY_WINDOW_SECONDS: '1' } });
    try {
      await brief.connect('u_late');
      const input = { title: 'retried too late' };
      const held = approvalOf(await brief.run('acme.create_task', { user: 'u_late', input }));
      const approved = await brief.request(brief.key, 'POST', `/v1/approvals/${held.id}/approve`);
      expect(approved.status).toBe(200);
      await sleep(1800);
      const before = brief.acme.demo.stats().apiRequests;
      const late = approvalOf(await brief.run('acme.create_task', { user: 'u_late', input }));
      expect(late.id).not.toBe(held.id);
      expect(brief.acme.demo.stats().apiRequests).toBe(before);
      const [row] = await brief.db.sql<{ status: string; consumedAt: Date | null }[]>`
        select status, consumed_at from approvals where id = ${held.id}`;
      expect(row).toEqual({ status: 'approved', consumedAt: null });
    } finally {
      await brief.stop();
    }
  });
});

describe('deleting the user', () => {
  it('cancels their pending approvals', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_gus', input: { title: 'orphan' } }),
    );
    const deleted = await stack.request(stack.key, 'DELETE', '/v1/users/u_gus');
    expect(deleted.status).toBe(200);
    let status = '';
    for (let tries = 0; tries < 40 && status !== 'cancelled'; tries++) {
      const [row] = await stack.db.sql<{ status: string }[]>`
        select status from approvals where id = ${held.id}`;
      status = row?.status ?? '';
      if (status !== 'cancelled') await sleep(100);
    }
    expect(status).toBe('cancelled');
    const late = await stack.request(stack.key, 'POST', `/v1/approvals/${held.id}/approve`);
    expect(late.status).toBe(409);
  });
});
