import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;
let readOnly: TestKey;
const secrets: string[] = [];

interface ListItem {
  id: string;
  action: string;
  scope: string;
  decision: string;
  reason: string | null;
  agent_id: string;
  user: string;
  via: string;
  time: string;
}

interface FullEvent extends ListItem {
  approval: { id: string; status: string; decisions: unknown[] } | null;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
  policy: { id: string; version: number } | null;
  trace_id: string;
}

const made: { decision: string; traceId: string; answer: Answer }[] = [];

async function list(query: string, key: TestKey = stack.key) {
  const answer = await stack.request(key, 'GET', `/v1/audit${query}`);
  expect(answer.status).toBe(200);
  return answer.body as { data: ListItem[]; cursor: string | null };
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  const zoe = await stack.connect('u_zoe');
  secrets.push(zoe.accessToken, zoe.refreshToken);
  readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
  const calls: [string, string, Record<string, unknown>][] = [
    ['allowed', 'acme.list_tasks', { user: 'u_zoe' }],
    ['blocked', 'acme.create_task', { user: 'u_zoe', input: { title: 'audited' } }],
    ['denied', 'acme.delete_task', { user: 'u_zoe', input: { id: 't_1' } }],
    ['failed', 'acme.list_tasks', { user: 'u_zoe_without_connection' }],
  ];
  for (const [decision, action, body] of calls) {
    const answer = await stack.run(action, body, { headers: { 'gatehouse-via': 'mcp' } });
    made.push({ decision, traceId: answer.headers.get('x-trace-id') ?? '', answer });
  }
});

describe('GET /v1/audit', () => {
  it('has an event for every call, with every decision value, newest first', async () => {
    const page = await list('?limit=100');
    expect(page.data.map((item) => item.decision)).toEqual([
      'failed',
      'denied',
      'blocked',
      'allowed',
    ]);
    for (const item of page.data) {
      expect(item).toEqual({
        id: expect.any(String),
        action: expect.stringMatching(/^acme\./),
        scope: expect.stringMatching(/^(read|write|destructive)$/),
        decision: expect.any(String),
        reason: expect.any(String),
        agent_id: 'test-agent',
        user: expect.stringMatching(/^u_zoe/),
        via: 'mcp',
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      });
    }
    expect(page.data.find((item) => item.decision === 'failed')?.reason).toBe(
      'connection_required',
    );
  });

  it('filters by user and by decision, and pages with a cursor', async () => {
    expect((await list('?user=u_zoe')).data).toHaveLength(3);
    const blocked = await list('?decision=blocked');
    expect(blocked.data.map((item) => item.action)).toEqual(['acme.create_task']);
    const first = await list('?limit=3');
    expect(first.data).toHaveLength(3);
    expect(first.cursor).toEqual(expect.any(String));
    const second = await list(`?limit=3&cursor=${first.cursor ?? ''}`);
    expect(second.data).toHaveLength(1);
    expect(second.cursor).toBeNull();
    expect(second.data[0]?.decision).toBe('allowed');
  });

  it.each([
    ['?decision=maybe', 'decision'],
    ['?cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['?limit=0', 'limit'],
    ['?colour=red', 'colour'],
  ])('rejects %s naming %s', async (query, path) => {
    const answer = await stack.request(stack.key, 'GET', `/v1/audit${query}`);
    expect(answer.status).toBe(400);
    const issues = (answer.body.error as { issues: { path: string }[] }).issues;
    expect(issues.map((issue) => issue.path)).toContain(path);
  });

  it('is readable with a read-only key, and only in its own environment', async () => {
    expect((await list('', readOnly)).data.length).toBe(4);
    const other = await createTestKey(stack.db.sql, { env: 'other', access: 'full' });
    expect((await list('', other)).data).toEqual([]);
  });
});

describe('GET /v1/audit/{event_id}', () => {
  async function eventOf(decision: string): Promise<FullEvent> {
    const page = await list(`?decision=${decision}`);
    const id = page.data[0]?.id ?? '';
    const answer = await stack.request(stack.key, 'GET', `/v1/audit/${id}`);
    expect(answer.status).toBe(200);
    return answer.body as unknown as FullEvent;
  }

  it('carries the request, the response, the policy and the trace id of the HTTP request', async () => {
    for (const { decision, traceId } of made) {
      const event = await eventOf(decision);
      expect(event.trace_id).toBe(traceId);
      expect(event.request).toMatchObject({ action: event.action, user: event.user, via: 'mcp' });
    }
    const allowed = await eventOf('allowed');
    expect(allowed.response).toMatchObject({ ok: true, upstream_status: 200 });
    expect(allowed.policy).toEqual({ id: 'default', version: 1 });
    expect(allowed).not.toHaveProperty('approval');

    const blocked = await eventOf('blocked');
    expect(blocked.response).toBeNull();
    expect(blocked.request.input).toEqual({ title: 'audited' });
    const approvalId = (made[1]?.answer.body.error as { approval: { id: string } }).approval.id;
    expect(blocked.approval).toEqual({ id: approvalId, status: 'pending', decisions: [] });

    expect((await eventOf('denied')).response).toBeNull();
    expect((await eventOf('failed')).response).toBeNull();
  });

  it('shows the approval as it is now, and the run after approval as allowed', async () => {
    const approvalId = (made[1]?.answer.body.error as { approval: { id: string } }).approval.id;
    await stack.request(stack.approver, 'POST', `/v1/approvals/${approvalId}/approve`);
    const ran = await stack.run('acme.create_task', { user: 'u_zoe', input: { title: 'audited' } });
    expect(ran.status).toBe(200);
    const events = (await list('?user=u_zoe&limit=100')).data;
    const latest = events[0];
    expect(latest?.decision).toBe('allowed');
    const full = (await stack.request(stack.key, 'GET', `/v1/audit/${latest?.id ?? ''}`))
      .body as unknown as FullEvent;
    expect(full.approval).toEqual({
      id: approvalId,
      status: 'approved',
      decisions: [{ by: 'approver', decision: 'approve', at: expect.any(String), via: 'api' }],
    });
    expect(full.trace_id).toBe(ran.headers.get('x-trace-id'));
  });

  it('answers 404 for an unknown event and 400 for a malformed id', async () => {
    expect(
      (await stack.request(stack.key, 'GET', '/v1/audit/019a0000-0000-7000-8000-000000000000'))
        .status,
    ).toBe(404);
    expect((await stack.request(stack.key, 'GET', '/v1/audit/nope')).status).toBe(400);
  });

  it('holds no token', async () => {
    const rows = await stack.db.sql`select * from audit_events`;
    const text = JSON.stringify(rows);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
