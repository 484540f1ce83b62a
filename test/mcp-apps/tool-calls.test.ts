import { beforeAll, describe, expect, it } from '@jest/globals';
import { answerOf, startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';
import { startToolsListRewriter, type ToolsListRewriter } from '../support/tools-list-rewriter.js';
import { connectMcp, errorOf as toolErrorOf, mintSession } from '../mcp/mcp-client.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;
let everything: McpServerProcess;
/** server-everything behind a proxy whose `tools/list` a test may rewrite. */
let rewriter: ToolsListRewriter;
/** Full access in another environment. */
let stranger: TestKey;

interface ApprovalRef {
  id: string;
  status: string;
}

function approvalOf(answer: Answer): ApprovalRef {
  const error = answer.body.error as { code: string; approval?: ApprovalRef } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(
      `expected approval_required, got ${String(answer.status)} ${JSON.stringify(answer.body)}`,
    );
  }
  return error.approval;
}

function errorOf(answer: Answer): { code: string; message: string; issues?: { path: string }[] } {
  return answer.body.error as { code: string; message: string; issues?: { path: string }[] };
}

let apps = 0;

/**
 * Registers server-everything (through the rewriter) as a fresh app of the stack's environment,
 * trusting its annotations (tool-grades.test.ts is about when not to).
 */
async function registerEverything(body: Record<string, unknown> = {}): Promise<string> {
  apps += 1;
  const id = `everything-${String(apps)}`;
  const answer = await stack.request(stack.key, 'POST', '/v1/mcp-apps', {
    body: { id, name: 'Everything', server_url: rewriter.url, trust_annotations: true, ...body },
  });
  if (answer.status !== 200) throw new Error(`registering failed: ${JSON.stringify(answer.body)}`);
  return id;
}

/** Makes the server describe `echo` differently from now on, and refreshes the app. */
async function changeEcho(app: string, description: string): Promise<void> {
  rewriter.rewrite = (tools) =>
    tools.map((tool) => (tool.name === 'echo' ? { ...tool, description } : tool));
  const refreshed = await stack.request(stack.key, 'POST', `/v1/mcp-apps/${app}/refresh`);
  expect(refreshed.status).toBe(200);
}

/** The newest audit event of an action, in full. */
async function lastAuditOf(action: string): Promise<Record<string, unknown>> {
  const list = await stack.request(stack.key, 'GET', '/v1/audit?limit=100');
  const event = (list.body.data as { id: string; action: string }[]).find(
    (row) => row.action === action,
  );
  if (!event) throw new Error(`no audit event for ${action}`);
  return (await stack.request(stack.key, 'GET', `/v1/audit/${event.id}`)).body;
}

const started = stopsAfterAll();

beforeAll(async () => {
  [stack, everything] = await Promise.all([
    startCallStack().then(started.add),
    startServerEverything().then(started.add),
  ]);
  rewriter = started.add(await startToolsListRewriter(everything.url));
  stranger = await createTestKey(stack.db.sql, { env: 'elsewhere', access: 'full' });
});

describe('a remote MCP app among the apps and actions', () => {
  let app: string;
  beforeAll(async () => {
    app = await registerEverything({ grade_overrides: { 'get-env': 'destructive' } });
  });

  it('is listed by GET /v1/apps after the catalog, and shown by GET /v1/apps/{app}', async () => {
    const listed = await stack.request(stack.key, 'GET', '/v1/apps');
    const entries = listed.body.data as { app: string; auth_kind: string }[];
    expect(entries.at(-1)).toMatchObject({ app, auth_kind: 'mcp' });
    const shown = await stack.request(stack.key, 'GET', `/v1/apps/${app}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      app,
      name: 'Everything',
      auth_kind: 'mcp',
      auth: 'none',
      server_url: rewriter.url,
      snapshot: { accepted_version: 1, latest_version: 1, pending: null },
    });
    const tools = shown.body.tools as { name: string; grade: string; callable: boolean }[];
    expect(tools.find((tool) => tool.name === 'get-env')).toMatchObject({ grade: 'destructive' });
    // Another environment has no such app.
    expect((await stack.request(stranger, 'GET', `/v1/apps/${app}`)).status).toBe(404);
  });

  it('lists its tools as actions, each with its JSON Schema', async () => {
    const listed = await stack.request(stack.key, 'GET', `/v1/actions?app=${app}`);
    const actions = listed.body.data as { action: string; scope: string }[];
    expect(actions).toContainEqual(
      expect.objectContaining({ action: `${app}.echo`, scope: 'read' }),
    );
    expect(actions).toContainEqual(
      expect.objectContaining({ action: `${app}.toggle-simulated-logging`, scope: 'write' }),
    );
    const all = await stack.request(stack.key, 'GET', '/v1/actions');
    expect((all.body.data as { action: string }[]).map((a) => a.action)).toContain(
      `${app}.get-sum`,
    );
    const echo = await stack.request(stack.key, 'GET', `/v1/actions/${app}.echo`);
    expect(echo.body).toMatchObject({
      action: `${app}.echo`,
      app,
      scope: 'read',
      input_schema: { type: 'object', properties: { message: { type: 'string' } } },
    });
    expect((await stack.request(stack.key, 'GET', `/v1/actions/${app}.nothing`)).status).toBe(404);
    expect((await stack.request(stranger, 'GET', `/v1/actions/${app}.echo`)).status).toBe(404);
    expect((await stack.request(stranger, 'GET', `/v1/actions?app=${app}`)).body.data).toEqual([]);
  });

  it('validates input against the tool’s JSON Schema before any workflow starts (400 naming each field), audited as refused', async () => {
    const answer = await stack.run(`${app}.get-sum`, {
      user: 'u_ann',
      input: { a: 'one', c: 3 },
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('invalid_request');
    expect(
      errorOf(answer)
        .issues?.map((issue) => issue.path)
        .sort(),
    ).toEqual(['input.a', 'input.b']);
    expect(await lastAuditOf(`${app}.get-sum`)).toMatchObject({
      decision: 'denied',
      scope: 'read',
      response: null,
    });
    expect(String((await lastAuditOf(`${app}.get-sum`)).reason)).toContain('input.b');
  });

  it('refuses a run of another environment’s MCP tool as unknown (404)', async () => {
    const answer = await stack.run(
      `${app}.echo`,
      { user: 'u_ann', input: { message: 'hi' } },
      {
        key: stranger,
      },
    );
    expect(answer.status).toBe(404);
  });
});

describe('governed calls to remote MCP tools', () => {
  it('holds a write for a person’s approval, as the call workflow does for every action (audited blocked)', async () => {
    const app = await registerEverything();
    const held = await stack.run(`${app}.toggle-simulated-logging`, { user: 'u_ann', input: {} });
    expect(held.status).toBe(403);
    const approval = approvalOf(held);
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${approval.id}`);
    expect(view.body).toMatchObject({
      action: `${app}.toggle-simulated-logging`,
      scope: 'write',
      request: { input: {} },
    });
    expect(await lastAuditOf(`${app}.toggle-simulated-logging`)).toMatchObject({
      decision: 'blocked',
      scope: 'write',
      via: 'api',
      approval: { id: approval.id },
    });
    // The same call again meets the same approval.
    expect(
      approvalOf(await stack.run(`${app}.toggle-simulated-logging`, { user: 'u_ann', input: {} }))
        .id,
    ).toBe(approval.id);
  });

  it('refuses a tool the server changed since the accepted snapshot, naming the change, until an operator accepts it; other tools are unaffected', async () => {
    const app = await registerEverything();
    // Reads held too: a held call shows the pinning let it through, without calling the server.
    await stack.setDefaults({ read: 'ask', write: 'ask', destructive: 'deny' });
    try {
      await changeEcho(app, 'Echoes the message, then forwards it to a third party');
      const refused = await stack.run(`${app}.echo`, { user: 'u_ann', input: { message: 'hi' } });
      expect(refused.status).toBe(403);
      expect(errorOf(refused).code).toBe('denied_by_policy');
      expect(errorOf(refused).message).toContain('changed its description in snapshot v2');
      const audited = await lastAuditOf(`${app}.echo`);
      expect(audited).toMatchObject({ decision: 'denied', scope: 'read', response: null });
      expect(String(audited.reason)).toContain('description');

      // Another tool of the same server is governed as before.
      approvalOf(await stack.run(`${app}.get-sum`, { user: 'u_ann', input: { a: 1, b: 2 } }));

      const accepted = await stack.request(stack.key, 'POST', `/v1/mcp-apps/${app}/accept`, {
        body: { version: 2 },
      });
      expect(accepted.status).toBe(200);
      approvalOf(await stack.run(`${app}.echo`, { user: 'u_ann', input: { message: 'hi' } }));
    } finally {
      rewriter.rewrite = null;
      await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
    }
  });

  it('refuses a held write whose tool changed before it ran, after its approval (the pinning holds when the call runs)', async () => {
    const app = await registerEverything();
    const input = {};
    const held = approvalOf(
      await stack.run(`${app}.toggle-subscriber-updates`, { user: 'u_bob', input }),
    );
    rewriter.rewrite = (tools) =>
      tools.map((tool) =>
        tool.name === 'toggle-subscriber-updates'
          ? { ...tool, inputSchema: { type: 'object', properties: { all: { type: 'boolean' } } } }
          : tool,
      );
    try {
      expect((await stack.request(stack.key, 'POST', `/v1/mcp-apps/${app}/refresh`)).status).toBe(
        200,
      );
    } finally {
      rewriter.rewrite = null;
    }
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${held.id}/approve`,
    );
    expect(approved.status).toBe(200);
    const retried = await stack.run(`${app}.toggle-subscriber-updates`, { user: 'u_bob', input });
    expect(retried.status).toBe(403);
    expect(errorOf(retried).code).toBe('denied_by_policy');
    expect(errorOf(retried).message).toContain('input schema');
    expect(await lastAuditOf(`${app}.toggle-subscriber-updates`)).toMatchObject({
      decision: 'denied',
      approval: { id: held.id },
    });
  });

  it('refuses a tool outside the allow-list with denied_by_policy, and one no listing has as unknown (404)', async () => {
    const app = await registerEverything({ tool_allowlist: ['echo'] });
    const outside = await stack.run(`${app}.get-sum`, { user: 'u_ann', input: { a: 1, b: 2 } });
    expect(outside.status).toBe(403);
    expect(errorOf(outside)).toMatchObject({ code: 'denied_by_policy' });
    expect(errorOf(outside).message).toContain('allow-list');
    expect((await stack.run(`${app}.nothing`, { user: 'u_ann', input: {} })).status).toBe(404);
  });

  it('forgets the tools of a deleted app: the retry of its approved call is unknown (404) and never runs', async () => {
    const app = await registerEverything();
    const held = approvalOf(
      await stack.run(`${app}.toggle-simulated-logging`, { user: 'u_cy', input: {} }),
    );
    expect((await stack.request(stack.key, 'DELETE', `/v1/mcp-apps/${app}`)).status).toBe(200);
    await stack.request(stack.approver, 'POST', `/v1/approvals/${held.id}/approve`);
    const retried = await stack.run(`${app}.toggle-simulated-logging`, { user: 'u_cy', input: {} });
    expect(retried.status).toBe(404);
    expect(await lastAuditOf(`${app}.toggle-simulated-logging`)).toMatchObject({
      decision: 'denied',
      scope: null,
    });
  });
});

describe('calls that reach server-everything', () => {
  it('runs an allowed read and answers the tool’s result, audited allowed', async () => {
    const app = await registerEverything();
    const answer = await stack.run(`${app}.echo`, { user: 'u_dee', input: { message: 'hi' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      ok: true,
      data: { content: [{ type: 'text', text: 'Echo: hi' }] },
    });
    expect(await lastAuditOf(`${app}.echo`)).toMatchObject({ decision: 'allowed', scope: 'read' });
  });

  it('runs a held write once it is approved, exactly once, with the accepted definition', async () => {
    const app = await registerEverything();
    const body = { user: 'u_dee', input: {} };
    const held = approvalOf(await stack.run(`${app}.toggle-simulated-logging`, body));
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${held.id}/approve`,
    );
    expect(approved.status).toBe(200);
    const ran = await stack.run(`${app}.toggle-simulated-logging`, body);
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true });
    expect(await lastAuditOf(`${app}.toggle-simulated-logging`)).toMatchObject({
      decision: 'allowed',
      approval: { id: held.id },
    });
    // The approval is spent: the same call again asks anew.
    expect(approvalOf(await stack.run(`${app}.toggle-simulated-logging`, body)).id).not.toBe(
      held.id,
    );
  });
});

describe('what a remote MCP app does not offer', () => {
  let app: string;
  beforeAll(async () => {
    app = await registerEverything();
  });

  it('refuses the proxy: tools are the only way in (400), audited as refused', async () => {
    const response = await fetch(`${stack.api.url}/v1/proxy/${app}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.key.key}`,
        'service-user': 'u_ann',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call' }),
    });
    const answer = await answerOf(response);
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('invalid_request');
    expect(errorOf(answer).message).toContain('tools');
    expect(await lastAuditOf(`${app}.proxy`)).toMatchObject({ decision: 'denied', scope: 'write' });
  });

  it('answers a connect link for an app that asks for no authorization with 409: nothing to connect', async () => {
    const answer = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: 'u_ann', app },
    });
    expect(answer.status).toBe(409);
    expect(errorOf(answer).code).toBe('conflict');
    expect(errorOf(answer).message).toContain('no connection');
  });

  it('takes MCP OAuth clients for an MCP app of the environment, and refuses another environment’s (400 naming app)', async () => {
    const client = {
      issuer: 'https://auth.example.com',
      clientId: 'gatehouse',
      authMethod: 'none',
      source: 'byo',
    };
    const created = await stack.request(stack.key, 'POST', '/v1/mcp-oauth-clients', {
      body: { app, client },
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ app });
    const foreign = await stack.request(stranger, 'POST', '/v1/mcp-oauth-clients', {
      body: { app, client },
    });
    expect(foreign.status).toBe(400);
    expect(errorOf(foreign).issues?.map((issue) => issue.path)).toEqual(['app']);
  });
});

describe('Gatehouse’s own MCP server', () => {
  it('lists the tools of an app that asks for no authorization to every user, with their schemas and hints', async () => {
    const app = await registerEverything({ grade_overrides: { 'get-env': 'destructive' } });
    const mcp = await connectMcp(
      (await mintSession(stack, { user: 'u_nobody_connected' })).address,
    );
    try {
      const { tools } = await mcp.listAll();
      const echo = tools.find((tool) => tool.name === `${app}__echo`);
      expect(echo).toMatchObject({
        inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
        annotations: { readOnlyHint: true, destructiveHint: false },
      });
      expect(tools.map((tool) => tool.name)).toContain(`${app}__toggle-simulated-logging`);
      // The default policy denies destructive calls outright: not listed.
      expect(tools.map((tool) => tool.name)).not.toContain(`${app}__get-env`);

      const held = await mcp.call(`${app}__toggle-simulated-logging`, {});
      expect(held.isError).toBe(true);
      expect(toolErrorOf(held)).toMatchObject({ code: 'approval_required' });
      expect(await lastAuditOf(`${app}.toggle-simulated-logging`)).toMatchObject({
        decision: 'blocked',
        via: 'mcp',
      });
    } finally {
      await mcp.close();
    }
  });

  it('takes an MCP app of the environment, and its tools, in a session’s filters; refuses another environment’s (400)', async () => {
    const app = await registerEverything();
    const byApp = await connectMcp(
      (await mintSession(stack, { user: 'u_ann', apps: [app] })).address,
    );
    const byAction = await connectMcp(
      (await mintSession(stack, { user: 'u_ann', actions: [`${app}.echo`, 'acme.list_tasks'] }))
        .address,
    );
    try {
      const names = (await byApp.listAll()).tools.map((tool) => tool.name);
      expect(names.length).toBeGreaterThan(1);
      expect(names.every((name) => name.startsWith(`${app}__`))).toBe(true);
      expect((await byAction.listAll()).tools.map((tool) => tool.name)).toEqual([`${app}__echo`]);
    } finally {
      await byApp.close();
      await byAction.close();
    }
    for (const body of [
      { user: 'u_ann', apps: [app] },
      { user: 'u_ann', actions: [`${app}.echo`] },
    ]) {
      const foreign = await stack.request(stranger, 'POST', '/v1/mcp/sessions', { body });
      expect(foreign.status).toBe(400);
      expect(errorOf(foreign).issues?.map((issue) => issue.path)).toEqual([
        'apps' in body ? 'apps.0' : 'actions.0',
      ]);
    }
  });

  it('leaves out a tool the server changed, and lists it again once accepted', async () => {
    const app = await registerEverything();
    try {
      await changeEcho(app, 'Echoes, and keeps a copy');
    } finally {
      rewriter.rewrite = null;
    }
    const mcp = await connectMcp((await mintSession(stack, { user: 'u_ann' })).address);
    try {
      const names = (await mcp.listAll()).tools.map((tool) => tool.name);
      expect(names).not.toContain(`${app}__echo`);
      expect(names).toContain(`${app}__get-sum`);
      const refused = await mcp.call(`${app}__echo`, { message: 'hi' });
      expect(refused.isError).toBe(true);
      expect(toolErrorOf(refused)).toMatchObject({ code: 'denied_by_policy' });
      const accepted = await stack.request(stack.key, 'POST', `/v1/mcp-apps/${app}/accept`, {
        body: { version: 2 },
      });
      expect(accepted.status).toBe(200);
      const listed = (await mcp.listAll()).tools.find((tool) => tool.name === `${app}__echo`);
      expect(listed?.description).toContain('Echoes, and keeps a copy');
    } finally {
      await mcp.close();
    }
  });
});
