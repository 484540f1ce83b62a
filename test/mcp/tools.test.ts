import { beforeAll, describe, expect, it } from '@jest/globals';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { revokeApiKey } from '../../activities/db/api-keys.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { connectMcp, mintSession, type MintedSession } from './mcp-client.js';
import { stopsAfterAll } from '../support/stops.js';

/** Two tools a page, so paging is exercised on the demo user's few tools. */
const PAGE_SIZE = 2;

let stack: CallStack;
/** Agent `mcp-bot`, governed by policy `mcp-bot`: destructive calls are asked, not denied. */
let bot: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack({ env: { MCP_TOOLS_PAGE_SIZE: String(PAGE_SIZE) } }));
  await stack.connect('u_ann');
  bot = await createTestKey(stack.db.sql, { env: 'test', access: 'standard', agentId: 'mcp-bot' });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/mcp-bot', {
    body: {
      name: 'MCP bot',
      agents: ['mcp-bot'],
      defaults: { read: 'allow', write: 'ask', destructive: 'ask' },
    },
  });
  expect(policy.status).toBe(200);
});

const names = (tools: Tool[]) => tools.map((tool) => tool.name);

describe('minting a session', () => {
  it('answers 201 with an address under PUBLIC_URL that carries its secret, lasting 24 h', async () => {
    const answer = await stack.request(stack.key, 'POST', '/v1/mcp/sessions', {
      body: { user: 'u_ann' },
    });
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.body).sort()).toEqual(['expires_at', 'id', 'url']);
    const url = String(answer.body.url);
    expect(url.startsWith(`${stack.api.url}/mcp/gkmcp_`)).toBe(true);
    expect(url.slice(stack.api.url.length)).toMatch(/^\/mcp\/gkmcp_[A-Za-z0-9_-]{32}\/mcp$/);
    const lifetime = Date.parse(String(answer.body.expires_at)) - Date.now();
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000);
    // Only the secret's hash is kept.
    const [row] = await stack.db.sql<{ secretHash: Buffer; agentId: string; keyId: string }[]>`
      select secret_hash, agent_id, key_id from mcp_sessions where id = ${String(answer.body.id)}`;
    expect(row?.agentId).toBe('test-agent');
    expect(row?.keyId).toBe(stack.key.id);
    expect(row?.secretHash.toString('hex')).not.toContain(url.split('/').at(-2));
  });

  it.each([
    [{}, 'user'],
    [{ user: 'u_ann', apps: ['nope'] }, 'apps.0'],
    [{ user: 'u_ann', actions: ['acme.nope'] }, 'actions.0'],
    [{ user: 'u_ann', ttl_seconds: 10 }, 'ttl_seconds'],
    [{ user: 'u_ann', ttl_seconds: 31 * 24 * 3600 }, 'ttl_seconds'],
    [{ user: 'u_ann', extra: true }, 'extra'],
  ])('refuses %j naming %s', async (body, field) => {
    const answer = await stack.request(stack.key, 'POST', '/v1/mcp/sessions', { body });
    expect(answer.status).toBe(400);
    const issues = (answer.body.error as { issues: { path: string }[] }).issues;
    expect(issues.map((issue) => issue.path)).toContain(field);
  });

  it('hostile: refuses show_approval_links: true with 400 saying why, whatever the key; false is still accepted', async () => {
    // A decision link in an MCP session reaches the model, and so the governed agent: even a key
    // that may decide approvals (stack.key is full) cannot ask for one (README, "Decision links").
    for (const key of [stack.key, bot]) {
      const refused = await stack.request(key, 'POST', '/v1/mcp/sessions', {
        body: { user: 'u_ann', show_approval_links: true },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'invalid_request',
        issues: [{ path: 'show_approval_links', message: expect.any(String) as unknown }],
      });
      expect((refused.body.error as { message: string }).message).toMatch(
        /retired: a decision link is never given to the agent.*webhook.*gatehouse approvals link/,
      );
    }
    const [count] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from mcp_sessions where key_id = ${bot.id}`;
    expect(count?.n).toBe(0);
    // Old clients that send false keep working.
    const plain = await stack.request(bot, 'POST', '/v1/mcp/sessions', {
      body: { user: 'u_ann', show_approval_links: false },
    });
    expect(plain.status).toBe(201);
  });

  it('is refused to a read-only key, which could not call', async () => {
    const readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
    const answer = await stack.request(readOnly, 'POST', '/v1/mcp/sessions', {
      body: { user: 'u_ann' },
    });
    expect(answer.status).toBe(403);
  });
});

describe('tools/list', () => {
  let session: MintedSession;

  beforeAll(async () => {
    session = await mintSession(stack, { user: 'u_ann' });
  });

  it('lists the connected apps’ actions the policy does not deny, page by page', async () => {
    const mcp = await connectMcp(session.address);
    try {
      const first = await mcp.client.listTools();
      expect(first.tools).toHaveLength(PAGE_SIZE);
      expect(first.nextCursor).toEqual(expect.any(String));
      const { tools, pages } = await mcp.listAll();
      // The default policy denies destructive calls: acme__delete_task is left out.
      expect(names(tools)).toEqual([
        'acme__list_tasks',
        'acme__get_task',
        'acme__create_task',
        'acme__update_task',
      ]);
      expect(pages).toBe(2);
    } finally {
      await mcp.close();
    }
  });

  it('gives each tool the action’s JSON Schema, a title, a description and hints', async () => {
    const mcp = await connectMcp((await mintSession(stack, { user: 'u_ann' }, bot)).address);
    try {
      const { tools } = await mcp.listAll();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      const published = await stack.request(stack.key, 'GET', '/v1/actions/acme.create_task');
      const create = byName.get('acme__create_task');
      expect(create?.inputSchema).toEqual(published.body.input_schema);
      expect(create).toMatchObject({
        title: 'Acme Tasks: Create task',
        description: expect.stringContaining('Create a task.') as unknown,
        annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
      });
      // Held calls say so to the model before it calls.
      expect(create?.description).toContain('approval');
      expect(byName.get('acme__list_tasks')?.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
      });
      // Under mcp-bot's policy destructive calls are asked, so delete is listed, flagged.
      expect(byName.get('acme__delete_task')?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      });
      for (const tool of tools) expect(tool.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    } finally {
      await mcp.close();
    }
  });

  it('keeps to the session’s apps and actions filters', async () => {
    const filtered = await mintSession(stack, {
      user: 'u_ann',
      apps: ['acme'],
      actions: ['acme.list_tasks', 'acme.get_task', 'github.list_repos'],
    });
    const mcp = await connectMcp(filtered.address);
    try {
      expect(names((await mcp.listAll()).tools)).toEqual(['acme__list_tasks', 'acme__get_task']);
      await expect(mcp.call('acme__create_task', { title: 'outside' })).rejects.toMatchObject({
        code: ErrorCode.InvalidParams,
      });
    } finally {
      await mcp.close();
    }
  });

  it('lists every catalog app for a user with no connection when the session asks', async () => {
    const plain = await connectMcp((await mintSession(stack, { user: 'u_nobody' })).address);
    const wide = await connectMcp(
      (await mintSession(stack, { user: 'u_nobody', include_unconnected_apps: true })).address,
    );
    try {
      expect((await plain.listAll()).tools).toEqual([]);
      const { tools } = await wide.listAll();
      const apps = new Set(tools.map((tool) => tool.name.split('__')[0]));
      expect([...apps].sort()).toEqual(
        ['acme', 'github', 'gmail', 'google-calendar', 'linear', 'notion', 'slack'].sort(),
      );
      const list = tools.find((tool) => tool.name === 'acme__list_tasks');
      expect(list?.description).toContain('connect link');
    } finally {
      await plain.close();
      await wide.close();
    }
  });

  it('refuses a cursor it did not make with -32602', async () => {
    const mcp = await connectMcp(session.address);
    try {
      const error = await mcp.client.listTools({ cursor: 'not-a-cursor' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    } finally {
      await mcp.close();
    }
  });
});

/** A plain POST, as a client would send before the SDK gets to say anything. */
function post(url: URL, body: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'curl', version: '1' },
  },
});

describe('the session’s end', () => {
  async function refusedWith401(session: MintedSession, description: RegExp): Promise<void> {
    const answer = await post(session.address, initialize);
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="gatehouse", error="invalid_token", error_description=".+"$/,
    );
    expect(answer.headers.get('www-authenticate')).toMatch(description);
    const body = (await answer.json()) as { jsonrpc: string; error: { code: number } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    // The SDK's client sees the 401 too.
    const error = await connectMcp(session.address).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
  }

  it('past its lifetime: 401 with WWW-Authenticate', async () => {
    const session = await mintSession(stack, { user: 'u_ann', ttl_seconds: 60 });
    await stack.db.sql`
      update mcp_sessions set expires_at = now() - interval '1 second' where id = ${session.id}`;
    await refusedWith401(session, /expired/);
  });

  it('revoked: DELETE answers the revocation, then 401; again is the same; unknown is 404', async () => {
    const session = await mintSession(stack, { user: 'u_ann' });
    const mcp = await connectMcp(session.address);
    await mcp.close();
    const revoked = await stack.request(stack.key, 'DELETE', `/v1/mcp/sessions/${session.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({
      id: session.id,
      status: 'revoked',
      revoked_at: expect.any(String) as unknown,
    });
    const again = await stack.request(stack.key, 'DELETE', `/v1/mcp/sessions/${session.id}`);
    expect(again.body).toEqual(revoked.body);
    await refusedWith401(session, /revoked/);
    for (const id of ['019a0000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const unknown = await stack.request(stack.key, 'DELETE', `/v1/mcp/sessions/${id}`);
      expect(unknown.status).toBe(404);
    }
  });

  it('hostile: another agent’s key cannot revoke a session: 404 as if unknown, and the session still serves', async () => {
    const session = await mintSession(stack, { user: 'u_ann' }, bot);
    const other = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: 'other-bot',
    });
    // A full key whose scopes were set by hand, without mcp_sessions:manage, is no better.
    const fullWithoutScope = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'full',
      agentId: 'ops',
      scopes: ['approvals:read', 'approvals:decide', 'policies:read'],
    });
    for (const key of [other, fullWithoutScope]) {
      const refused = await stack.request(key, 'DELETE', `/v1/mcp/sessions/${session.id}`);
      expect(refused.status).toBe(404);
      expect(refused.body.error).toMatchObject({ code: 'not_found' });
      // The same answer as for a session that does not exist: nothing tells it is there.
      const unknown = await stack.request(
        key,
        'DELETE',
        '/v1/mcp/sessions/019a0000-0000-7000-8000-000000000000',
      );
      expect(unknown.body).toEqual(refused.body);
    }
    const [row] = await stack.db.sql<{ revokedAt: Date | null }[]>`
      select revoked_at from mcp_sessions where id = ${session.id}`;
    expect(row?.revokedAt).toBeNull();
    expect((await post(session.address, initialize)).status).toBe(200);
  });

  it('is revoked by any key of the minting agent, and by a key with mcp_sessions:manage', async () => {
    // Another key of the same agent (a rotated key, say) may end the agent's sessions.
    const rotated = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: 'mcp-bot',
    });
    const own = await mintSession(stack, { user: 'u_ann' }, bot);
    const byAgent = await stack.request(rotated, 'DELETE', `/v1/mcp/sessions/${own.id}`);
    expect(byAgent.status).toBe(200);
    expect(byAgent.body).toMatchObject({ id: own.id, status: 'revoked' });
    // Full keys get mcp_sessions:manage by default; other keys when it is granted.
    const manager = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: 'session-admin',
      scopes: ['mcp_sessions:manage'],
    });
    for (const key of [stack.approver, manager]) {
      const session = await mintSession(stack, { user: 'u_ann' }, bot);
      const revoked = await stack.request(key, 'DELETE', `/v1/mcp/sessions/${session.id}`);
      expect(revoked.status).toBe(200);
      expect((await post(session.address, initialize)).status).toBe(401);
    }
    // Never across environments, whatever the scope.
    const session = await mintSession(stack, { user: 'u_ann' }, bot);
    const elsewhere = await createTestKey(stack.db.sql, { env: 'staging', access: 'full' });
    const refused = await stack.request(elsewhere, 'DELETE', `/v1/mcp/sessions/${session.id}`);
    expect(refused.status).toBe(404);
  });

  it('ends with the key that minted it', async () => {
    const key = await createTestKey(stack.db.sql, { env: 'test', access: 'standard' });
    const session = await mintSession(stack, { user: 'u_ann' }, key);
    await revokeApiKey(stack.db.sql, key.id);
    await refusedWith401(session, /key that minted/);
  });

  it('an address that was never minted is 401 too', async () => {
    const session = await mintSession(stack, { user: 'u_ann' });
    const forged = new URL(session.address);
    forged.pathname = `/mcp/gkmcp_${'A'.repeat(32)}/mcp`;
    await refusedWith401({ ...session, address: forged }, /unknown/);
  });
});

describe('the endpoint', () => {
  it('answers a plain API key with Service-User, and needs the header', async () => {
    const address = new URL('/mcp', stack.api.url);
    const mcp = await connectMcp(address, {
      headers: { ...bearer(stack.key.key), 'Service-User': 'u_ann' },
    });
    try {
      expect(names((await mcp.listAll()).tools)).toContain('acme__list_tasks');
    } finally {
      await mcp.close();
    }
    const missing = await post(address, initialize, bearer(stack.key.key));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32600, data: { code: 'invalid_request' } },
    });
    const noKey = await post(address, initialize, { 'Service-User': 'u_ann' });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('speaks JSON-RPC errors for what it cannot take, and keeps its secret out of logs', async () => {
    const session = await mintSession(stack, { user: 'u_ann' });
    const garbled = await post(session.address, '{"jsonrpc":');
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });

    const get = await fetch(session.address, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');

    const foreign = await post(session.address, initialize, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);

    const unknownSession = await post(
      session.address,
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      { 'mcp-session-id': 'forged', 'mcp-protocol-version': '2025-11-25' },
    );
    expect(unknownSession.status).toBe(404);

    const initialized = await post(session.address, initialize);
    expect(initialized.status).toBe(200);
    expect(initialized.headers.get('mcp-session-id')).toMatch(/^[\x21-\x7e]+$/);

    const secret = session.address.pathname.split('/').at(-2) ?? '';
    expect(secret).toMatch(/^gkmcp_/);
    const logs = stack.api.logs.join('\n');
    expect(logs).not.toContain(secret);
    expect(logs).toContain('/mcp/[token]');
  });
});

describe('malformed MCP input', () => {
  /** An initialized exchange's headers, as a client sends them after `initialize`. */
  async function initialized(session: MintedSession): Promise<Record<string, string>> {
    const answer = await post(session.address, initialize);
    expect(answer.status).toBe(200);
    return {
      'mcp-session-id': answer.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
  }

  /** The JSON-RPC message of an answer, whether sent as JSON or as one SSE event. */
  async function rpcOf(answer: Response): Promise<Record<string, unknown>> {
    const text = await answer.text();
    const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
    return JSON.parse(data) as Record<string, unknown>;
  }

  it('hostile: tools/call with arguments: [] is -32602 with a short message naming the field', async () => {
    const session = await mintSession(stack, { user: 'u_ann' });
    const headers = await initialized(session);
    const before = stack.acme.demo.stats().apiRequests;
    const answer = await post(
      session.address,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'acme__create_task', arguments: [] },
      }),
      headers,
    );
    expect(answer.status).toBe(200);
    const rpc = await rpcOf(answer);
    expect(rpc).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: ErrorCode.InvalidParams } });
    const message = (rpc.error as { message: string }).message;
    expect(message).toMatch(/arguments/);
    expect(message).toMatch(/object/);
    // A sentence, not a schema validator's dump.
    expect(message.length).toBeLessThan(200);
    expect(message).not.toMatch(/[[{]/);
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
  });

  it('hostile: an empty JSON-RPC batch is answered with one JSON-RPC error, not 202', async () => {
    const session = await mintSession(stack, { user: 'u_ann' });
    const headers = await initialized(session);
    const answer = await post(session.address, '[]', headers);
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as Record<string, unknown>;
    // JSON-RPC 2.0 §6: an empty array is an Invalid Request, answered by a single Response.
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: ErrorCode.InvalidRequest, message: expect.stringMatching(/empty/) as unknown },
    });
    expect(Array.isArray(body)).toBe(false);
  });
});
