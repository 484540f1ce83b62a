import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import { formToken } from '../../activities/approvals/form-token.js';
import { derivedKey, hashLinkToken } from '../../activities/approvals/link-token.js';
import type { CallStack } from '../support/call-stack.js';
import {
  approvalIdOf,
  linksOf,
  startApprovalStack,
  tokenOf,
  type ApprovalStack,
} from './approval-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Decision links belong to people (README "Decision links"): each stored link records the channel
 * it went out through and, when an API key chose where it went, that key's agent. A link that
 * went through the held call's own agent never decides its call, whatever approver it names.
 */

let approvals: ApprovalStack;
let stack: CallStack;
let publicOrigin: string;

const started = stopsAfterAll();

beforeAll(async () => {
  // The webhook endpoint is set with stack.key, whose agent (test-agent) also makes the calls:
  // the position of an agent holding a full key, which can point the webhook at itself and so
  // receive the decision links of its own held calls.
  approvals = started.add(await startApprovalStack());
  stack = approvals.stack;
  publicOrigin = new URL(stack.config.api.publicUrl).origin;
  await stack.connect('u_links');
  await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
});

interface Page {
  status: number;
  text: string;
}

async function open(url: string, init: RequestInit = {}): Promise<Page> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, text: await response.text() };
}

/** Posts the decision as the page's own form would, with the form field made for this link. */
function approveThrough(url: string): Promise<Page> {
  return open(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: publicOrigin,
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({
      decision: 'approve',
      csrf: formToken(stack.config.encryption, tokenOf(url)),
    }).toString(),
  });
}

async function titles(): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user: 'u_links' });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

async function approvalState(id: string) {
  const view = await stack.request(stack.approver, 'GET', `/v1/approvals/${id}`);
  return { status: view.body.status, decided_by: view.body.decided_by };
}

interface LinkRow {
  approver: string;
  channel: string | null;
  keyAgentId: string | null;
}

const linkRows = (approvalId: string) =>
  stack.db.sql<LinkRow[]>`
    select approver, channel, key_agent_id from approval_links
    where approval_id = ${approvalId} order by created_at`;

async function setEndpointWith(key: CallStack['key']): Promise<void> {
  const set = await stack.request(key, 'PUT', '/v1/webhook-endpoint', {
    body: { url: approvals.receiver.url, secret: approvals.secret },
  });
  expect(set.status).toBe(200);
}

describe('where a decision link went', () => {
  it('hostile: a link delivered to an endpoint the held agent’s own key set cannot decide its call, even as the generic approver', async () => {
    await setEndpointWith(stack.key);
    const input = { title: `self-approved ${randomUUID()}` };
    const held = await stack.run('acme.create_task', { user: 'u_links', input });
    const approvalId = approvalIdOf(held);
    const url = (await linksOf(approvals, approvalId))['role:approver'] ?? '';
    expect(url).toContain('/approvals/review/');

    // The page shows the request but no buttons, and says which rule refuses.
    const page = await open(url);
    expect(page.status).toBe(403);
    expect(page.text).toContain('You cannot decide this approval through this link.');
    expect(page.text).toContain('webhook endpoint that agent &quot;test-agent&quot; set');
    expect(page.text).not.toContain('<form');

    // A well-formed POST is refused the same way; nothing is decided, nothing runs.
    const before = stack.acme.demo.stats().apiRequests;
    const refused = await approveThrough(url);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('webhook endpoint that agent &quot;test-agent&quot; set');
    expect(await approvalState(approvalId)).toEqual({ status: 'pending', decided_by: null });
    const again = await stack.run('acme.create_task', { user: 'u_links', input });
    expect(again.body.error).toMatchObject({ code: 'approval_required' });
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
    expect(await titles()).not.toContain(input.title);
    const [used] = await stack.db.sql<{ usedAt: Date | null }[]>`
      select used_at from approval_links where approval_id = ${approvalId}`;
    expect(used?.usedAt).toBeNull();
    expect(await linkRows(approvalId)).toEqual([
      { approver: 'role:approver', channel: 'webhook', keyAgentId: 'test-agent' },
    ]);
  });

  it('a link delivered to an endpoint another agent’s key set decides, and runs the call once', async () => {
    await setEndpointWith(stack.approver);
    try {
      const input = { title: `approved by a person ${randomUUID()}` };
      const approvalId = approvalIdOf(
        await stack.run('acme.create_task', { user: 'u_links', input }),
      );
      const url = (await linksOf(approvals, approvalId))['role:approver'] ?? '';
      expect(await linkRows(approvalId)).toEqual([
        { approver: 'role:approver', channel: 'webhook', keyAgentId: 'approver' },
      ]);
      expect((await open(url)).status).toBe(200);
      expect((await approveThrough(url)).status).toBe(200);
      expect(await approvalState(approvalId)).toEqual({
        status: 'approved',
        decided_by: 'role:approver (decision link)',
      });
      const ran = await stack.run('acme.create_task', { user: 'u_links', input });
      expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
      expect((await titles()).filter((title) => title === input.title)).toHaveLength(1);
    } finally {
      await setEndpointWith(stack.key);
    }
  });

  it('an endpoint set from the command line records no agent: its links decide any agent’s call', async () => {
    // `gatehouse webhooks set` writes the endpoint with no key (test/cli/webhooks.test.ts runs
    // the command itself); this stack's endpoint row is given that provenance directly.
    await stack.db.sql`
      update webhook_endpoints set key_agent_id = null, updated_by = 'cli'
      where environment_id = ${stack.environmentId}`;
    try {
      const input = { title: `cli endpoint ${randomUUID()}` };
      const approvalId = approvalIdOf(
        await stack.run('acme.create_task', { user: 'u_links', input }),
      );
      const url = (await linksOf(approvals, approvalId))['role:approver'] ?? '';
      expect(await linkRows(approvalId)).toEqual([
        { approver: 'role:approver', channel: 'webhook', keyAgentId: null },
      ]);
      expect((await approveThrough(url)).status).toBe(200);
      expect((await approvalState(approvalId)).status).toBe('approved');
    } finally {
      await setEndpointWith(stack.key);
    }
  });

  it('links stored before provenance was recorded keep deciding until their approval expires', async () => {
    // Issued before migration 017: the token was an HMAC of the approval id and the approver
    // only, and the row records no channel.
    const approvalId = approvalIdOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_links', input: { title: `legacy ${randomUUID()}` } },
        { key: stack.approver },
      ),
    );
    const legacy = createHmac('sha256', derivedKey(stack.config.encryption, 'approval-link'))
      .update(`approval-link\0${approvalId}\0alice`, 'utf8')
      .digest('base64url');
    await stack.db.sql`
      insert into approval_links (token_hash, approval_id, environment_id, approver, expires_at)
      select ${hashLinkToken(legacy)}, id, environment_id, 'alice', expires_at
      from approvals where id = ${approvalId}`;
    const url = `${stack.config.api.publicUrl}/approvals/review/${legacy}`;
    expect((await open(url)).status).toBe(200);
    expect((await approveThrough(url)).status).toBe(200);
    expect(await approvalState(approvalId)).toEqual({
      status: 'approved',
      decided_by: 'alice (decision link)',
    });
  });

  it('a generic link stored before it was named role:approver still decides, labelled as then', async () => {
    const approvalId = approvalIdOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_links', input: { title: `legacy generic ${randomUUID()}` } },
        { key: stack.approver },
      ),
    );
    const legacy = createHmac('sha256', derivedKey(stack.config.encryption, 'approval-link'))
      .update(`approval-link\0${approvalId}\0approval-link`, 'utf8')
      .digest('base64url');
    await stack.db.sql`
      insert into approval_links (token_hash, approval_id, environment_id, approver, expires_at)
      select ${hashLinkToken(legacy)}, id, environment_id, 'approval-link', expires_at
      from approvals where id = ${approvalId}`;
    const url = `${stack.config.api.publicUrl}/approvals/review/${legacy}`;
    const page = await open(url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('(anyone holding this link)');
    expect((await approveThrough(url)).status).toBe(200);
    expect(await approvalState(approvalId)).toEqual({
      status: 'approved',
      decided_by: 'approval-link',
    });
  });
});
