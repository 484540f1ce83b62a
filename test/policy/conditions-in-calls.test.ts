import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { connectMcp, errorOf, mintSession } from '../mcp/mcp-client.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * End to end: conditions decide REST runs, proxy calls and MCP tools/call alike, the
 * approval and the audit name the rule and its condition, a condition that cannot be judged never
 * lets a call through, and a policy with a bad condition is refused naming the rule and position.
 */
let stack: CallStack;
/** Agent `careful`, governed by policy `careful`, which this file rewrites. */
let careful: TestKey;

const LARGE = 'has(input.notes) && size(input.notes) > 100';

async function setPolicy(rules: object[]): Promise<Answer> {
  return stack.request(stack.key, 'PUT', '/v1/policies/careful', {
    body: {
      name: 'Careful',
      agents: ['careful'],
      defaults: { read: 'allow', write: 'allow', destructive: 'deny' },
      rules,
    },
  });
}

interface AuditRow {
  decision: string;
  reason: string;
  approvalId: string | null;
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_cond');
  careful = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'careful' });
});

describe('conditions decide calls', () => {
  it('holds a large write for approval and lets a small one through, naming the condition', async () => {
    expect(
      (await setPolicy([{ action: 'acme.create_task', when: LARGE, decision: 'ask' }])).status,
    ).toBe(200);

    const small = await stack.run(
      'acme.create_task',
      { user: 'u_cond', input: { title: `small ${String(Date.now())}`, notes: 'short' } },
      { key: careful },
    );
    expect(small.status).toBe(200);

    const large = await stack.run(
      'acme.create_task',
      { user: 'u_cond', input: { title: `large ${String(Date.now())}`, notes: 'x'.repeat(500) } },
      { key: careful },
    );
    expect(large.status).toBe(403);
    const error = large.body.error as { code: string; approval: { id: string } };
    expect(error.code).toBe('approval_required');

    const rule = `rule (action acme.create_task, when ${JSON.stringify(LARGE)}) held`;
    const approval = await stack.request(
      stack.approver,
      'GET',
      `/v1/approvals/${error.approval.id}`,
    );
    // The policy in force judges the condition on the held call's input too.
    expect(approval.body).toMatchObject({
      policy: { id: 'careful', rule },
      policy_in_force: { id: 'careful', decision: 'ask', rule },
    });
    const [row] = await stack.db.sql<AuditRow[]>`
      select decision, reason, approval_id from audit_events
      where approval_id = ${error.approval.id}`;
    expect(row).toMatchObject({ decision: 'blocked' });
    expect(row?.reason).toContain(`${rule} → ask`);
  });

  it('never loosens on a condition over a field the input lacks, and the audit says so', async () => {
    await setPolicy([
      { app: 'acme', scope: 'write', decision: 'deny' },
      { app: 'acme', scope: 'write', when: 'input.amount < 100', decision: 'allow' },
    ]);
    const answer = await stack.run(
      'acme.create_task',
      { user: 'u_cond', input: { title: 'no amount here' } },
      { key: careful },
    );
    expect(answer.status).toBe(403);
    expect((answer.body.error as { code: string }).code).toBe('denied_by_policy');
    const rows = await stack.db.sql<AuditRow[]>`
      select decision, reason, approval_id from audit_events
      where agent_id = 'careful' and request->'input'->>'title' = 'no amount here'`;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.decision).toBe('denied');
    expect(rows[0]?.reason).toMatch(
      /rule \(app acme, scope write\) → deny; rule \(app acme, scope write, when "input.amount < 100"\) not applied: its condition could not be judged \(No such key: amount/,
    );
  });

  it('denies a proxy write by its path, however the path is encoded', async () => {
    await setPolicy([
      {
        action: 'acme.proxy',
        when: 'request.method == "POST" && request.path.startsWith("/tasks")',
        decision: 'deny',
      },
      { action: 'acme.proxy', decision: 'allow' },
    ]);
    for (const path of ['tasks', '%74asks']) {
      const answer = await stack.request(careful, 'POST', `/v1/proxy/acme/${path}`, {
        headers: { 'service-user': 'u_cond' },
        body: { title: 'through the proxy' },
      });
      expect([path, answer.status]).toEqual([path, 403]);
    }
    const read = await stack.request(careful, 'GET', '/v1/proxy/acme/tasks', {
      headers: { 'service-user': 'u_cond' },
    });
    expect(read.status).toBe(200);
  });

  it('judges MCP tools/call by the same conditions', async () => {
    await setPolicy([{ action: 'acme.create_task', when: LARGE, decision: 'deny' }]);
    const session = await mintSession(stack, { user: 'u_cond' }, careful);
    const mcp = await connectMcp(session.address);
    try {
      const { tools } = await mcp.listAll();
      const tool = tools.find((t) => t.name === 'acme__create_task');
      // Listed, since only some calls are denied, and its description says so.
      expect(tool?.description).toMatch(/Depending on its arguments/);
      const refused = await mcp.call('acme__create_task', {
        title: 'large via MCP',
        notes: 'y'.repeat(300),
      });
      expect(refused.isError).toBe(true);
      expect(errorOf(refused)).toMatchObject({ code: 'denied_by_policy' });
      const ran = await mcp.call('acme__create_task', { title: 'small via MCP' });
      expect(ran.isError).toBeUndefined();
    } finally {
      await mcp.close();
    }
  });

  it('refuses a policy with a bad condition, naming the rule and the position, and keeps the old one', async () => {
    await setPolicy([{ action: 'acme.create_task', when: LARGE, decision: 'ask' }]);
    const before = await stack.request(stack.key, 'GET', '/v1/policies/careful');
    for (const [when, message] of [
      ['input.notes.size() > ', /^line 1, column 22: Unexpected token: EOF/],
      ['user + 1 == 2', /^line 1, column 1: no such overload: string \+ int/],
      ['nosuch', /Unknown variable: nosuch/],
      [`${'true || '.repeat(240)}true`, /maxAstNodes/],
      ['x'.repeat(2001), /2000/],
    ] as const) {
      const answer = await setPolicy([
        { app: 'acme', decision: 'allow' },
        { action: 'acme.create_task', when, decision: 'allow' },
      ]);
      expect(answer.status).toBe(400);
      const error = answer.body.error as {
        code: string;
        issues: { path: string; message: string }[];
      };
      expect(error.code).toBe('invalid_request');
      expect(error.issues).toEqual([
        { path: 'rules.1.when', message: expect.stringMatching(message) as unknown as string },
      ]);
    }
    const after = await stack.request(stack.key, 'GET', '/v1/policies/careful');
    expect(after.body).toEqual(before.body);
  });

  it('lets an agent key write no conditions into its own policy', async () => {
    const agent = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: 'careful',
    });
    const answer = await stack.request(agent, 'PUT', '/v1/policies/careful', {
      body: {
        defaults: { read: 'allow', write: 'allow', destructive: 'allow' },
        rules: [{ app: 'acme', when: 'true', decision: 'allow' }],
      },
    });
    expect(answer.status).toBe(403);
  });

  it('answers a call promptly however costly its conditions are', async () => {
    await setPolicy([
      { action: 'acme.create_task', when: 'input.notes.matches("^(a+)+$")', decision: 'allow' },
      { action: 'acme.create_task', decision: 'ask' },
    ]);
    const answer = await stack.run(
      'acme.create_task',
      { user: 'u_cond', input: { title: 'regex bomb', notes: `${'a'.repeat(40)}b` } },
      { key: careful },
    );
    // The allow rule could not be judged in its budget: the ask stands.
    expect(answer.status).toBe(403);
    expect((answer.body.error as { code: string }).code).toBe('approval_required');
  });
});
