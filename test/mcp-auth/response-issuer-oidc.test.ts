// RFC 9207 with a real authorization server that sends `iss`: the demo app's oidc-provider, behind
// a real MCP server (test/support/demo-protected-mcp-server.ts). oidc-provider advertises
// `authorization_response_iss_parameter_supported` and names its issuer in every authorization
// response: those connect; the same response with `iss` taken out or changed on the way back
// (what a mix-up or a tampering proxy would bring) is refused, with no code exchange. Once
// connected, the app's tools are listed with the user's token, and the app shows the MCP
// protocol revision its server negotiated.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { consentThroughLink, returnToCallback } from '../../infra/demo-app/scripted-connect.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import {
  startDemoProtectedMcpServer,
  type DemoProtectedMcpServer,
} from '../support/demo-protected-mcp-server.js';
import { stopsAfterAll } from '../support/stops.js';

const APP = 'tasks-mcp';
const OTHER_ISSUER = 'https://login.northwind.example/';

let stack: ConnectStack;
let mcp: DemoProtectedMcpServer;

const started = stopsAfterAll();

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.key.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  stack = started.add(await startConnectStack());
  mcp = started.add(await startDemoProtectedMcpServer(stack.demo.url));
  const registered = await call('POST', '/v1/mcp-apps', {
    id: APP,
    name: 'Tasks MCP',
    server_url: mcp.serverUrl,
  });
  expect(registered).toMatchObject({ status: 200, body: { data: { auth: 'oauth' } } });
  // Gatehouse's client at the demo app, which offers no registration: the operator's own.
  const created = await call('POST', '/v1/mcp-oauth-clients', {
    app: APP,
    client: {
      issuer: stack.demo.url,
      ...stack.client,
      authMethod: 'client_secret_basic',
      source: 'byo',
    },
  });
  expect(created.status).toBe(200);
  const { id } = created.body.data as { id: string };
  expect((await call('POST', `/v1/mcp-oauth-clients/${id}/select`)).status).toBe(200);
}, 120_000);

/** The user consents at the demo app; the browser brings back what `rewrite` makes of its answer. */
async function connect(user: string, rewrite: (callback: URL) => void = () => undefined) {
  const link = await createLink(stack, { user, app: APP });
  expect(link.status).toBe(201);
  const reached = await consentThroughLink(((await link.json()) as { url: string }).url, {
    username: user,
  });
  if ('refused' in reached) throw new Error(`refused: ${reached.refused.html}`);
  const sent = reached.callback.searchParams.get('iss');
  rewrite(reached.callback);
  const exchangesBefore = stack.demo.stats().tokenRequests.authorization_code;
  const page = await returnToCallback(reached.callback, reached.jar);
  const [row] = await stack.db.sql<{ count: number }[]>`
    select count(*)::int as count from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} and c.app = ${APP} and c.status = 'active'`;
  return {
    sent,
    page,
    exchanges: stack.demo.stats().tokenRequests.authorization_code - exchangesBefore,
    connections: row?.count ?? 0,
  };
}

describe('an MCP server whose authorization server is oidc-provider', () => {
  it('is refused when iss is taken out of the response: its metadata advertises it', async () => {
    const outcome = await connect('u_stripped', (callback) => {
      callback.searchParams.delete('iss');
    });
    expect(outcome.sent).toBe(stack.demo.url);
    expect(outcome.page.status).toBe(502);
    expect(outcome.page.html).toContain('We could not verify where you signed in');
    expect(outcome.exchanges).toBe(0);
    expect(outcome.connections).toBe(0);
  });

  it('is refused when iss is changed to another issuer on the way back', async () => {
    const outcome = await connect('u_changed', (callback) => {
      callback.searchParams.set('iss', OTHER_ISSUER);
    });
    expect(outcome.page.status).toBe(502);
    expect(outcome.exchanges).toBe(0);
    expect(outcome.connections).toBe(0);
  });

  it('connects with its own answer, which names its issuer in iss', async () => {
    const outcome = await connect('alice');
    expect(outcome.sent).toBe(stack.demo.url);
    expect(outcome.page.status).toBe(200);
    expect(outcome.exchanges).toBe(1);
    expect(outcome.connections).toBe(1);
  });

  it('lists the tools with the connected user’s token, and shows the protocol revision negotiated', async () => {
    const before = await call('GET', `/v1/mcp-apps/${APP}`);
    expect(before.body.data).toMatchObject({ protocol_version: null });
    const refreshed = await call('POST', `/v1/mcp-apps/${APP}/refresh`);
    expect(refreshed).toMatchObject({
      status: 200,
      body: {
        data: {
          protocol_version: LATEST_PROTOCOL_VERSION,
          snapshot: { latest_version: 1, pending: { version: 1 } },
        },
      },
    });
    expect((await call('POST', `/v1/mcp-apps/${APP}/accept`, { version: 1 })).status).toBe(200);
    const ran = await call('POST', `/v1/actions/${APP}.whoami/run`, { user: 'alice', input: {} });
    expect(ran).toMatchObject({
      status: 200,
      body: { ok: true, data: { content: [{ type: 'text', text: 'alice' }] } },
    });
  });
});
