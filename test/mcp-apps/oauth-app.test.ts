// A remote MCP server that asks for authorization, registered through the management interface:
// the MCP SDK's example OAuth server. No tools until a user connects; the first snapshot, listed
// with that user's token at a refresh, waits for an operator's acceptance.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { api, startMcpAuthStack, type McpAuthStack } from '../support/mcp-auth-stack.js';
import { walkMcpLink } from '../support/mcp-connect-walk.js';
import { startMcpExampleServer, type McpExampleServer } from '../support/mcp-example-server.js';
import { connectMcp, errorOf, textOf } from '../mcp/mcp-client.js';

let stack: McpAuthStack;
let server: McpExampleServer;
/** What set-up started, stopped even after a failed set-up (whose error is the one to read). */
const stops: (() => Promise<void>)[] = [];

const APP = 'example-oauth';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await api(stack, method, path, body);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface AppOut {
  auth: string;
  protocol_version: string | null;
  actions: { action: string }[];
  tools: { name: string; callable: boolean; refused_because: string | null; grade: string }[];
  snapshot: {
    accepted_version: number | null;
    latest_version: number | null;
    pending: { version: number; changes: { added: string[] } } | null;
  };
}

function appOf(answer: Answer): AppOut {
  if (answer.status !== 200) throw new Error(`expected 200, got ${JSON.stringify(answer.body)}`);
  return answer.body.data as AppOut;
}

/** The session address of a minted MCP session, on the stack's API. */
async function sessionAddress(user: string): Promise<URL> {
  const minted = await call('POST', '/v1/mcp/sessions', { user });
  expect(minted.status).toBe(201);
  return new URL(new URL(String(minted.body.url)).pathname, stack.api.url);
}

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startMcpExampleServer().then((started) => (stops.push(() => started.stop()), started)),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

describe('an MCP server that asks for authorization', () => {
  it('is registered with auth "oauth" and no tools: there is nothing to list without a user', async () => {
    const app = appOf(
      await call('POST', '/v1/mcp-apps', {
        id: APP,
        name: 'Example OAuth',
        server_url: server.serverUrl,
        grade_overrides: { greet: 'read' },
      }),
    );
    expect(app).toMatchObject({
      auth: 'oauth',
      // Nothing listed yet: no revision was negotiated.
      protocol_version: null,
      tools: [],
      snapshot: { accepted_version: null, latest_version: null, pending: null },
    });
    const refresh = await call('POST', `/v1/mcp-apps/${APP}/refresh`);
    expect(refresh.status).toBe(409);
    expect(JSON.stringify(refresh.body)).toContain('no user has an active connection');
  });

  it('lists its tools with a connected user’s token at a refresh, as a first snapshot that waits for acceptance', async () => {
    expect(
      (
        await call('PUT', '/v1/mcp-client-branding', {
          client_name: 'Northwind Assistant',
        })
      ).status,
    ).toBe(200);
    const link = await call('POST', '/v1/connect/links', { user: 'u_oauth', app: APP });
    expect(link.status).toBe(201);
    const walk = await walkMcpLink(String(link.body.url));
    if (walk.stoppedAt !== 'callback') throw new Error(`stopped at ${walk.stoppedAt}`);
    expect(walk.page.status).toBe(200);

    const refreshed = appOf(await call('POST', `/v1/mcp-apps/${APP}/refresh`));
    // Listed with the user's token: the revision the example server negotiated (the SDK's newest).
    expect(refreshed.protocol_version).toBe('2025-11-25');
    expect(appOf(await call('GET', `/v1/mcp-apps/${APP}`)).protocol_version).toBe('2025-11-25');
    expect(refreshed.snapshot).toMatchObject({
      accepted_version: null,
      latest_version: 1,
      pending: { version: 1 },
    });
    expect(refreshed.snapshot.pending?.changes.added).toContain('greet');
    expect(refreshed.actions).toEqual([]);
    const greet = refreshed.tools.find((tool) => tool.name === 'greet');
    expect(greet).toMatchObject({ callable: false, grade: 'read' });
    expect(greet?.refused_because).toContain('no operator has accepted');

    const refused = await call('POST', `/v1/actions/${APP}.greet/run`, {
      user: 'u_oauth',
      input: { name: 'Ann' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'denied_by_policy' });
  });

  it('once accepted, runs a tool with the user’s token, and lists it only to users who connected', async () => {
    const accepted = appOf(await call('POST', `/v1/mcp-apps/${APP}/accept`, { version: 1 }));
    expect(accepted.snapshot).toMatchObject({ accepted_version: 1, pending: null });
    expect(accepted.actions.map((action) => action.action)).toContain(`${APP}.greet`);

    const ran = await call('POST', `/v1/actions/${APP}.greet/run`, {
      user: 'u_oauth',
      input: { name: 'Ann' },
    });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({
      ok: true,
      data: { content: [{ type: 'text', text: 'Hello, Ann!' }] },
    });

    const stranger = await call('POST', `/v1/actions/${APP}.greet/run`, {
      user: 'u_never_connected',
      input: { name: 'Bo' },
    });
    expect(stranger.status).toBe(409);
    expect(stranger.body.error).toMatchObject({ code: 'connection_required' });

    const connected = await connectMcp(await sessionAddress('u_oauth'));
    const unconnected = await connectMcp(await sessionAddress('u_never_connected'));
    try {
      expect((await connected.listAll()).tools.map((tool) => tool.name)).toContain(`${APP}__greet`);
      expect((await unconnected.listAll()).tools.map((tool) => tool.name)).not.toContain(
        `${APP}__greet`,
      );
    } finally {
      await connected.close();
      await unconnected.close();
    }
  });

  it('offers no connect link through Gatehouse’s MCP server while the app cannot be connected (its server down)', async () => {
    // Last: the example server stops here for good.
    await server.stop();
    const minted = await call('POST', '/v1/mcp/sessions', {
      user: 'u_not_yet',
      include_unconnected_apps: true,
    });
    expect(minted.status).toBe(201);
    const client = await connectMcp(
      new URL(new URL(String(minted.body.url)).pathname, stack.api.url),
    );
    try {
      const result = await client.call(`${APP}__greet`, { name: 'Cy' });
      expect(result.isError).toBe(true);
      expect(errorOf(result)).toMatchObject({ code: 'connection_required' });
      expect(errorOf(result).connect_url).toBeUndefined();
      expect(textOf(result)).toContain('cannot be connected in this environment yet');
    } finally {
      await client.close();
    }
  });
});
