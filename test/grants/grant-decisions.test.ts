import { beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { formToken } from '../../activities/approvals/form-token.js';
import type { GrantView } from '../../workflows/grant-types.js';
import {
  linksOf,
  startApprovalStack,
  tokenOf,
  type ApprovalStack,
} from '../approvals/approval-stack.js';
import type { CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { deliveriesOf } from '../support/webhook-receiver.js';
import { AGENT, agentKey, approvalIdOf, createTask, setGrantPolicy } from './grant-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Every decision path (the REST decision API, the management decide_approval, the
 * hosted page) takes a grant, within the policy's maximum, from a decider the four-eyes rules
 * allow; the governed agent cannot grant itself through any of them.
 */
let approvals: ApprovalStack;
let stack: CallStack;
let agent: TestKey;
/** The governed agent holding keys that may decide, as an agent given a full key would. */
let agentFull: TestKey;
let agentBusiness: TestKey;
let publicOrigin: string;

const started = stopsAfterAll();

beforeAll(async () => {
  approvals = started.add(await startApprovalStack());
  stack = approvals.stack;
  publicOrigin = new URL(stack.config.api.publicUrl).origin;
  await stack.connect('u_one');
  agent = await agentKey(stack);
  agentFull = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: AGENT });
  agentBusiness = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'full',
    agentId: AGENT,
    audience: 'business',
  });
  await setGrantPolicy(stack, 3600);
});

async function held(): Promise<string> {
  return approvalIdOf(await createTask(stack, agent, 'u_one'));
}

async function state(approvalId: string) {
  const [approval] = await stack.db.sql<{ status: string }[]>`
    select status from approvals where id = ${approvalId}`;
  const grants = await stack.db.sql`select id from grants where approval_id = ${approvalId}`;
  return { status: approval?.status, grants: grants.length };
}

interface Page {
  status: number;
  text: string;
}

async function open(url: string, init: RequestInit = {}): Promise<Page> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, text: await response.text() };
}

/** Posts the page's own form for `url`, with the fields given. */
function post(url: string, fields: Record<string, string>): Promise<Page> {
  return open(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: publicOrigin,
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({
      csrf: formToken(stack.config.encryption, tokenOf(url)),
      ...fields,
    }).toString(),
  });
}

async function setEndpointWith(key: TestKey): Promise<void> {
  const set = await stack.request(key, 'PUT', '/v1/webhook-endpoint', {
    body: { url: approvals.receiver.url, secret: approvals.secret },
  });
  expect(set.status).toBe(200);
}

const grant = { for: 'any_user', seconds: 3600 };

describe('hostile: the agent trying to grant itself', () => {
  it('is refused by the REST decision API, with its calling key and with a full key', async () => {
    const approvalId = await held();
    const own = await stack.request(agent, 'POST', `/v1/approvals/${approvalId}/approve`, {
      body: { grant },
    });
    expect(own.status).toBe(403);
    expect(own.body.error).toMatchObject({ code: 'insufficient_access' });
    const full = await stack.request(agentFull, 'POST', `/v1/approvals/${approvalId}/approve`, {
      body: { grant },
    });
    expect(full.status).toBe(403);
    expect((full.body.error as { message: string }).message).toContain(
      'an agent can never decide its own approval',
    );
    expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
    expect((await createTask(stack, agent, 'u_one')).body.error).toMatchObject({
      code: 'approval_required',
    });
  });

  it('is refused by the management decide_approval', async () => {
    const approvalId = await held();
    const answer = await stack.request(
      agentBusiness,
      'POST',
      `/v1/approvals/${approvalId}/decision`,
      { body: { decision: 'approve', grant } },
    );
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'insufficient_access' });
    expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
  });

  it('is refused on the hosted page reached by a link that went through its own key', async () => {
    await setEndpointWith(agentFull);
    try {
      const approvalId = await held();
      const url = (await linksOf(approvals, approvalId))['role:approver'] ?? '';
      const page = await open(url);
      expect(page.status).toBe(403);
      expect(page.text).not.toContain('name="grant"');
      const refused = await post(url, {
        decision: 'approve',
        grant: 'any_user',
        grant_seconds: '3600',
      });
      expect(refused.status).toBe(403);
      expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
    } finally {
      await setEndpointWith(stack.key);
    }
  });

  it('never reaches the workflow as a grant: no grant row after all of it', async () => {
    const [count] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from grants where created_by = ${AGENT}`;
    expect(count?.n).toBe(0);
  });
});

describe('a grant beyond what the policy allows', () => {
  it.each([
    ['longer than max_grant_seconds', { for: 'user', seconds: 3601 }, /at most 3600 seconds/],
    ['for nobody in particular', { for: 'everyone', seconds: 60 }, /Invalid request body/],
    ['of no length', { for: 'user', seconds: 0 }, /Invalid request body/],
  ])('is 400 when %s, and decides nothing', async (_what, asked, message) => {
    const approvalId = await held();
    for (const [path, body] of [
      [`/v1/approvals/${approvalId}/approve`, { grant: asked }],
      [`/v1/approvals/${approvalId}/decision`, { decision: 'approve', grant: asked }],
    ] as const) {
      const answer = await stack.request(stack.approver, 'POST', path, { body });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'invalid_request' });
      expect((answer.body.error as { message: string }).message).toMatch(message);
    }
    expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
  });

  it('is 400 with a rejection', async () => {
    const approvalId = await held();
    const answer = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/decision`,
      { body: { decision: 'deny', grant } },
    );
    expect(answer.status).toBe(400);
    expect((answer.body.error as { message: string }).message).toContain('only with an approval');
    expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
  });

  it('is 400 with POST /v1/approvals/{id}/reject, naming grant; rejecting without one still works', async () => {
    const approvalId = await held();
    const path = `/v1/approvals/${approvalId}/reject`;
    const answer = await stack.request(stack.approver, 'POST', path, { body: { grant } });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'grant', message: expect.any(String) as unknown }],
    });
    expect((answer.body.error as { message: string }).message).toContain('only with an approval');
    expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
    const plain = await stack.request(stack.approver, 'POST', path);
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({ id: approvalId, status: 'rejected', decided_by: 'approver' });
    expect(await state(approvalId)).toEqual({ status: 'rejected', grants: 0 });
  });

  it('is 400 when grants are off, saying so; approving without one still works', async () => {
    const approvalId = await held();
    await setGrantPolicy(stack, 0);
    try {
      const answer = await stack.request(
        stack.approver,
        'POST',
        `/v1/approvals/${approvalId}/approve`,
        { body: { grant: { for: 'user', seconds: 60 } } },
      );
      expect(answer.status).toBe(400);
      expect((answer.body.error as { message: string }).message).toContain(
        'Grants are off for agent "granted-bot": policy "granted" sets approval.max_grant_seconds to 0',
      );
      expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });
      const plain = await stack.request(
        stack.approver,
        'POST',
        `/v1/approvals/${approvalId}/approve`,
      );
      expect(plain.status).toBe(200);
      expect(plain.body).toEqual({
        id: approvalId,
        status: 'approved',
        decided_by: 'approver',
      });
    } finally {
      await setGrantPolicy(stack, 3600);
    }
  });
});

describe('deciding with a grant', () => {
  it('management decide_approval answers the approval as before, with the grant; approval.decided carries it', async () => {
    const approvalId = await held();
    const answer = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/decision`,
      { body: { decision: 'approve', grant: { for: 'user', seconds: 1800 } } },
    );
    expect(answer.status).toBe(200);
    const data = answer.body.data as Record<string, unknown> & { grant: GrantView };
    expect(data).toMatchObject({
      id: approvalId,
      status: 'approved',
      decided_by: 'approver',
      policy_in_force: { id: 'granted' },
      grant: {
        agent_id: AGENT,
        action: 'acme.create_task',
        for: 'user',
        user: 'u_one',
        approval_id: approvalId,
        created_by: 'approver',
        status: 'active',
      },
    });
    const [delivery] = await deliveriesOf(approvals.receiver, `evt_${approvalId}`, 1);
    if (!delivery) throw new Error('approval.decided was not delivered');
    const event = new Webhook(approvals.secret).verify(delivery.body, delivery.headers) as {
      data: { approval: { grant?: GrantView } };
    };
    expect(event.data.approval.grant).toMatchObject({ id: data.grant.id, status: 'active' });
    await stack.request(stack.key, 'DELETE', `/v1/grants/${data.grant.id}`);
  });

  it('the hosted page offers grants up to the maximum, and makes one as the link’s approver', async () => {
    await setGrantPolicy(stack, 4 * 3600);
    try {
      const approvalId = await held();
      const url = (await linksOf(approvals, approvalId))['role:approver'] ?? '';
      const page = await open(url);
      expect(page.status).toBe(200);
      expect(page.text).toContain('name="grant" value="user"');
      expect(page.text).toContain('name="grant" value="any_user"');
      expect(page.text).toContain('<option value="3600">1 hour</option>');
      expect(page.text).toContain('<option value="14400">4 hours</option>');
      expect(page.text).not.toContain('8 hours');

      // Longer than the policy allows (a form not made by the page): refused, nothing decided.
      const over = await post(url, { decision: 'approve', grant: 'user', grant_seconds: '14401' });
      expect(over.status).toBe(400);
      expect(over.text).toContain('This grant cannot be made');
      expect(await state(approvalId)).toEqual({ status: 'pending', grants: 0 });

      const decided = await post(url, {
        decision: 'approve',
        grant: 'user',
        grant_seconds: '3600',
      });
      expect(decided.status).toBe(200);
      expect(decided.text).toContain('run without asking');
      const [made] = await stack.db.sql<{ createdBy: string; userExternalId: string }[]>`
        select created_by, user_external_id from grants where approval_id = ${approvalId}`;
      expect(made).toEqual({
        createdBy: 'role:approver (decision link)',
        userExternalId: 'u_one',
      });
      const ran = await createTask(stack, agent, 'u_one');
      expect(ran.status).toBe(200);
    } finally {
      await setGrantPolicy(stack, 3600);
      await stack.db.sql`update grants set revoked_at = now(), revoked_by = 'test'
        where revoked_at is null`;
    }
  });

  it('the hosted page offers no grant when grants are off, and Reject ignores the choice', async () => {
    await setGrantPolicy(stack, 0);
    try {
      const approvalId = await held();
      const url = (await linksOf(approvals, approvalId))['role:approver'] ?? '';
      expect((await open(url)).text).not.toContain('name="grant"');
      const rejected = await post(url, {
        decision: 'reject',
        grant: 'any_user',
        grant_seconds: '60',
      });
      expect(rejected.status).toBe(200);
      expect(await state(approvalId)).toEqual({ status: 'rejected', grants: 0 });
    } finally {
      await setGrantPolicy(stack, 3600);
    }
  });
});
