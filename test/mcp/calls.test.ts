import { beforeAll, describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { APPROVAL_PAGE_PATH } from '../../activities/approvals/link-token.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { bearer } from '../support/keys.js';
import {
  connectMcp,
  errorOf,
  mintSession,
  onTestApi,
  textOf,
  type TestMcpClient,
} from './mcp-client.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  for (const user of ['u_ann', 'u_ben', 'u_cat', 'u_dan', 'u_eve']) await stack.connect(user);
});

/** A connected client on a fresh session for `user`, closed after `use`. */
async function withSession<T>(
  body: Record<string, unknown>,
  use: (mcp: TestMcpClient) => Promise<T>,
  options: { urlElicitation?: boolean } = {},
): Promise<T> {
  const session = await mintSession(stack, body);
  const mcp = await connectMcp(session.address, options);
  try {
    return await use(mcp);
  } finally {
    await mcp.close();
  }
}

async function titles(user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

interface AuditRow {
  action: string;
  decision: string;
  reason: string;
  via: string;
  agentId: string;
  approvalId: string | null;
}

/** The user's audit events, oldest first; of one action when named. */
async function auditOf(user: string, action?: string): Promise<AuditRow[]> {
  return stack.db.sql<AuditRow[]>`
    select action, decision, reason, via, agent_id, approval_id from audit_events
    where user_external_id = ${user} ${action === undefined ? stack.db.sql`` : stack.db.sql`and action = ${action}`}
    order by id`;
}

describe('tools/call', () => {
  it('allowed: the app’s answer as structured content and as text', async () => {
    await withSession({ user: 'u_ann' }, async (mcp) => {
      const result = await mcp.call('acme__list_tasks', {});
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toEqual({ ok: true, data: { tasks: [] } });
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    });
  });

  it('held: answers at once with the approval and who is asked, never a link; approved, the same call runs once', async () => {
    const input = { title: `via MCP ${String(Date.now())}` };
    // Minted by a full key, which may decide approvals: its session still gets no decision link.
    await withSession({ user: 'u_ben' }, async (mcp) => {
      const held = await mcp.call('acme__create_task', input);
      expect(held.isError).toBe(true);
      const error = errorOf(held);
      const approval = error.approval as Record<string, unknown>;
      expect(error.code).toBe('approval_required');
      expect(Object.keys(approval).sort()).toEqual([
        'expires_at',
        'id',
        'requested_from',
        'status',
      ]);
      expect(approval).toMatchObject({ status: 'pending', requested_from: [] });
      expect(Date.parse(String(approval.expires_at))).toBeGreaterThan(Date.now());
      expect(textOf(held)).toContain(String(approval.id));
      expect(textOf(held)).toContain('same arguments');
      expect(textOf(held)).toMatch(/any person who may decide approvals, not this agent/i);
      expect(JSON.stringify(held)).not.toContain(APPROVAL_PAGE_PATH);

      // Asked again while pending: the same approval, still nothing sent.
      const again = await mcp.call('acme__create_task', input);
      expect((errorOf(again).approval as { id: string }).id).toBe(approval.id);
      expect(JSON.stringify(again)).not.toContain(APPROVAL_PAGE_PATH);
      expect(await titles('u_ben')).not.toContain(input.title);

      // A person approves it with their own key.
      const decided = await stack.request(
        stack.approver,
        'POST',
        `/v1/approvals/${String(approval.id)}/approve`,
      );
      expect(decided.status).toBe(200);
      const before = stack.acme.demo.stats().apiRequests;
      const ran = await mcp.call('acme__create_task', input);
      expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
      expect(ran.isError).toBeUndefined();
      expect(ran.structuredContent).toMatchObject({ ok: true, data: { title: input.title } });
      expect((await titles('u_ben')).filter((title) => title === input.title)).toHaveLength(1);

      // The approval record shows the call came through MCP.
      const view = await stack.request(stack.key, 'GET', `/v1/approvals/${String(approval.id)}`);
      expect(view.body).toMatchObject({
        status: 'approved',
        decided_by: 'approver',
        request: { via: 'mcp', input },
      });
    });
    // (The test's own checks of the app's state went over REST: they are `via: api`.)
    const audit = await auditOf('u_ben', 'acme.create_task');
    expect(audit.map((row) => [row.action, row.decision, row.via])).toEqual([
      ['acme.create_task', 'blocked', 'mcp'],
      ['acme.create_task', 'blocked', 'mcp'],
      ['acme.create_task', 'allowed', 'mcp'],
    ]);
    expect(new Set(audit.map((row) => row.agentId))).toEqual(new Set(['test-agent']));
  });

  it('held: names who is asked when the policy names deciders, and still carries no link', async () => {
    await stack.setDefaults(
      { read: 'allow', write: 'ask', destructive: 'deny' },
      { approval: { requested_from: ['alice', 'bob'], ttl_seconds: 3600 } },
    );
    try {
      await withSession({ user: 'u_cat' }, async (mcp) => {
        const held = await mcp.call('acme__create_task', { title: 'asks alice and bob' });
        expect(errorOf(held).approval).toMatchObject({ requested_from: ['alice', 'bob'] });
        expect(textOf(held)).toContain('"alice", "bob"');
        expect(JSON.stringify(held)).not.toContain(APPROVAL_PAGE_PATH);
      });
    } finally {
      await stack.setDefaults(
        { read: 'allow', write: 'ask', destructive: 'deny' },
        { approval: { requested_from: [], ttl_seconds: 24 * 3600 } },
      );
    }
  });

  it('hostile: a session stored with show_approval_links (minted before it was retired) gets no decision link, in results or elicitations', async () => {
    // The issue's path: a key that may decide minted the session with links shown; its client
    // (with or without URL-mode elicitation) calls a held tool and the model reads the link.
    for (const urlElicitation of [false, true]) {
      const input = { title: `old session ${String(urlElicitation)}` };
      const session = await mintSession(stack, { user: 'u_cat' });
      await stack.db.sql`
        update mcp_sessions set show_approval_links = true where id = ${session.id}`;
      const mcp = await connectMcp(session.address, { urlElicitation });
      try {
        const first = await mcp.call('acme__create_task', input);
        const results = [first, await mcp.call('acme__create_task', input)];
        for (const result of results) {
          expect(errorOf(result).code).toBe('approval_required');
          expect(JSON.stringify(result)).not.toContain(APPROVAL_PAGE_PATH);
        }
        // An elicitation travels ahead of its result: any would have come by now.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(mcp.elicitations).toEqual([]);
        // So no link was made for the agent: only the webhook or the CLI can make one.
        const approvalId = (errorOf(first).approval as { id: string }).id;
        expect(
          await stack.db.sql`select 1 from approval_links where approval_id = ${approvalId}`,
        ).toHaveLength(0);
      } finally {
        await mcp.close();
      }
      expect(await titles('u_cat')).not.toContain(input.title);
    }
  });

  it('hostile: a REST caller’s held answer carries no decision link either', async () => {
    const held = await stack.run('acme.create_task', {
      user: 'u_cat',
      input: { title: 'over REST' },
    });
    expect(held.status).toBe(403);
    expect(held.body.error).toMatchObject({ code: 'approval_required' });
    expect(JSON.stringify(held.body)).not.toContain(APPROVAL_PAGE_PATH);
    const id = (held.body.error as { approval: { id: string } }).approval.id;
    for (const path of [
      `/v1/approvals/${id}`,
      '/v1/approvals?status=pending',
      '/v1/audit?user=u_cat',
    ]) {
      const read = await stack.request(stack.key, 'GET', path);
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain(APPROVAL_PAGE_PATH);
    }
  });

  it('denied: isError with the reason, whether by the policy or by a person', async () => {
    await withSession({ user: 'u_dan' }, async (mcp) => {
      // Not listed (the policy denies it outright), and still governed when called.
      const denied = await mcp.call('acme__delete_task', { id: 't_1' });
      expect(denied.isError).toBe(true);
      expect(errorOf(denied)).toMatchObject({ code: 'denied_by_policy', retryable: false });
      expect(textOf(denied)).toMatch(/destructive/);

      const input = { title: 'refused by a person' };
      const held = errorOf(await mcp.call('acme__create_task', input));
      const id = (held.approval as { id: string }).id;
      const rejected = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/reject`);
      expect(rejected.status).toBe(200);
      const after = await mcp.call('acme__create_task', input);
      expect(errorOf(after)).toMatchObject({ code: 'denied_by_policy', approval: { id } });
      expect(textOf(after)).toContain(id);
    });
    const decisions = (await auditOf('u_dan')).map((row) => [row.decision, row.via]);
    expect(decisions).toEqual([
      ['denied', 'mcp'],
      ['blocked', 'mcp'],
      ['denied', 'mcp'],
    ]);
  });

  it('bad arguments: a tool error naming the field, audited as a refusal', async () => {
    await withSession({ user: 'u_eve' }, async (mcp) => {
      const empty = await mcp.call('acme__create_task', { title: '' });
      expect(empty.isError).toBe(true);
      expect(errorOf(empty).code).toBe('invalid_request');
      expect(textOf(empty)).toMatch(/^Invalid arguments for acme__create_task: title: /);
      const extra = await mcp.call('acme__list_tasks', { colour: 'red' });
      expect(textOf(extra)).toContain('colour: unknown field');
      // An unknown tool is a protocol error (-32602), not a tool result.
      await expect(mcp.call('acme__fly', {})).rejects.toMatchObject({
        code: ErrorCode.InvalidParams,
      });
    });
    const audit = await auditOf('u_eve');
    expect(audit.map((row) => [row.action, row.decision, row.via])).toEqual([
      ['acme.create_task', 'denied', 'mcp'],
      ['acme.list_tasks', 'denied', 'mcp'],
      ['acme.fly', 'denied', 'mcp'],
    ]);
    expect(audit[0]?.reason).toMatch(/^invalid_request: input\.title: /);
  });

  it('unconnected: the hosted connect link, in the result or shown to the person', async () => {
    await withSession({ user: 'u_new', include_unconnected_apps: true }, async (mcp) => {
      const result = await mcp.call('acme__list_tasks', {});
      expect(result.isError).toBe(true);
      const error = errorOf(result);
      expect(error).toMatchObject({ code: 'connection_required', app: 'acme' });
      expect(String(error.connect_url)).toMatch(/\/connect\/[^/]+$/);
      const page = await fetch(onTestApi(stack, String(error.connect_url)));
      expect(page.status).toBe(200);
      // An app with no OAuth client in this environment cannot offer one, and says so.
      const github = await mcp.call('github__list_repos', {});
      expect(errorOf(github)).not.toHaveProperty('connect_url');
      expect(textOf(github)).toContain('cannot be connected');
    });
    const elicited = await withSession(
      { user: 'u_new', include_unconnected_apps: true },
      async (mcp) => {
        const error = errorOf(await mcp.call('acme__list_tasks', {}));
        expect(error).not.toHaveProperty('connect_url');
        return mcp.elicited(1);
      },
      { urlElicitation: true },
    );
    expect(elicited).toEqual([
      expect.objectContaining({
        mode: 'url',
        url: expect.stringMatching(/\/connect\/[^/]+$/) as unknown,
      }),
    ]);
    const audit = await auditOf('u_new');
    expect(audit.every((row) => row.via === 'mcp' && row.decision === 'failed')).toBe(true);
    expect(audit.length).toBeGreaterThanOrEqual(3);
  });

  it('a plain API key with Service-User calls as its own agent, via mcp', async () => {
    const mcp = await connectMcp(new URL('/mcp', stack.api.url), {
      headers: { ...bearer(stack.approver.key), 'Service-User': 'u_ann' },
    });
    try {
      const result = await mcp.call('acme__list_tasks', { status: 'open' });
      expect(result.structuredContent).toMatchObject({ ok: true });
    } finally {
      await mcp.close();
    }
    const [last] = await stack.db.sql<AuditRow[]>`
      select action, decision, reason, via, agent_id, approval_id from audit_events
      where user_external_id = 'u_ann' order by id desc limit 1`;
    expect(last).toMatchObject({ action: 'acme.list_tasks', decision: 'allowed', via: 'mcp' });
    expect(last?.agentId).toBe('approver');
    // And the audit API shows it so.
    const listed = await stack.request(stack.key, 'GET', '/v1/audit?user=u_ann');
    expect((listed.body.data as { via: string }[])[0]?.via).toBe('mcp');
  });
});
