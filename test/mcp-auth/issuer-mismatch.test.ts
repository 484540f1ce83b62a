// A remote MCP server names an authorization server of its own whose metadata claims another's
// issuer, the one an operator's own MCP OAuth client belongs to. RFC 8414 §3.3: metadata whose
// `issuer` is not the identifier it was fetched for must not be used. Nothing of the operator's
// client (its client_id, its secret, a Basic credential) may reach that server, and neither may
// anything else Gatehouse would present there (its registration, its metadata document).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createConnectLink } from '../../activities/db/connect-links.js';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { walkMcpLink } from '../support/mcp-connect-walk.js';
import {
  startScriptedMcpAuthServer,
  type ScriptedMcpAuthServer,
  type ScriptedRequest,
} from '../support/scripted-mcp-auth-server.js';

/** The issuer the operator registered its client at; never contacted by these tests. */
const LEGITIMATE_ISSUER = 'https://login.northwind.example/';
const BYO = { clientId: 'northwind-operator-client', clientSecret: 'byo-secret-7f3a9c1e5d2b' };

let stack: McpAuthStack;
let hostile: ScriptedMcpAuthServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [stack, hostile] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startScriptedMcpAuthServer().then((started) => (stops.push(() => started.close()), started)),
  ]);
  hostile.claimedIssuer = LEGITIMATE_ISSUER;
  // `hostile` has the operator's client selected; `hostile-dcr` has none (registration).
  await registerMcpApp(stack, { id: 'hostile', name: 'Hostile MCP', serverUrl: hostile.serverUrl });
  await registerMcpApp(stack, {
    id: 'hostile-dcr',
    name: 'Hostile DCR',
    serverUrl: hostile.serverUrl,
  });
  const created = await api(stack, 'POST', '/v1/mcp-oauth-clients', {
    app: 'hostile',
    client: { issuer: LEGITIMATE_ISSUER, ...BYO, authMethod: 'client_secret_basic', source: 'byo' },
  });
  expect(created.status).toBe(200);
  const { id } = ((await created.json()) as { data: { id: string } }).data;
  expect((await api(stack, 'POST', `/v1/mcp-oauth-clients/${id}/select`)).status).toBe(200);
  // With branding, Gatehouse could register itself there: only the issuer stands in the way.
  const branded = await api(stack, 'PUT', '/v1/mcp-client-branding', { client_name: 'Northwind' });
  expect(branded.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

/** Everything in a request an operator's client could have leaked through. */
const wire = (request: ScriptedRequest) =>
  `${request.url}\n${JSON.stringify(request.headers)}\n${request.body}`;

/** What the hostile server must never have received, whatever it was asked. */
function expectNothingOfTheOperatorsClient(requests: ScriptedRequest[]) {
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    expect(wire(request)).not.toContain(BYO.clientId);
    expect(wire(request)).not.toContain(BYO.clientSecret);
    expect(wire(request)).not.toContain(Buffer.from(BYO.clientSecret).toString('base64'));
    expect(request.headers.authorization ?? '').not.toMatch(/^basic/i);
  }
}

/** Requests that would present a client (authorize, token, register). */
const presenting = (requests: ScriptedRequest[]) =>
  requests.filter((request) => request.url.startsWith('/as/'));

async function oldLink(user: string, app: string): Promise<string> {
  const connected = await upsertConnectedUser(stack.db.sql, stack.environmentId, user, undefined);
  const { token } = await createConnectLink(stack.db.sql, stack.config.encryption, {
    environmentId: stack.environmentId,
    connectedUserId: connected.id,
    app,
    purpose: 'connect',
    ttlSeconds: 3600,
  });
  return `${stack.config.api.publicUrl}/connect/${token}`;
}

describe('an authorization server whose metadata claims another issuer', () => {
  it.each([
    ['hostile', 'named by the resource metadata', true],
    ['hostile-dcr', 'named by the resource metadata', true],
    ['hostile', "at the MCP server's own origin (no resource metadata)", false],
  ])(
    'a link to %s, its authorization server %s, is refused with 409 conflict naming both issuers',
    async (app, _layout, resourceMetadata) => {
      hostile.resourceMetadata = resourceMetadata;
      const from = hostile.requests.length;
      const response = await api(stack, 'POST', '/v1/connect/links', { user: 'u_h', app });
      const body = (await response.json()) as {
        error: { code: string; message: string; issuer: string; claimed_issuer: string };
      };
      expect({ status: response.status, body }).toMatchObject({
        status: 409,
        body: { error: { code: 'conflict' } },
      });
      const fetchedFor = resourceMetadata
        ? hostile.issuer
        : `${new URL(hostile.serverUrl).origin}/`;
      expect(body.error).toMatchObject({ issuer: fetchedFor, claimed_issuer: LEGITIMATE_ISSUER });
      expect(body.error.message).toContain(fetchedFor);
      expect(body.error.message).toContain(LEGITIMATE_ISSUER);
      expect(body.error.message).not.toContain(BYO.clientSecret);
      expect(presenting(hostile.requests.slice(from))).toEqual([]);
      hostile.resourceMetadata = true;
    },
  );

  it.each(['hostile', 'hostile-dcr'])(
    'a link to %s made before is refused at its start on a branded page, and the worker log names both issuers',
    async (app) => {
      const from = hostile.requests.length;
      const logsFrom = stack.workerLogs.length;
      const walk = await walkMcpLink(await oldLink(`u_old_${app}`, app));
      if (walk.stoppedAt !== 'start') throw new Error(`went on to ${walk.stoppedAt}`);
      expect(walk.page.status).toBe(502);
      expect(walk.page.html).toContain('could not be verified');
      expect(walk.page.html).not.toContain(LEGITIMATE_ISSUER);
      const sent = hostile.requests.slice(from);
      expect(presenting(sent)).toEqual([]);
      expectNothingOfTheOperatorsClient(sent);
      const named = stack.workerLogs
        .slice(logsFrom)
        .filter((line) => line.includes(hostile.issuer) && line.includes(LEGITIMATE_ISSUER));
      expect(named).toHaveLength(1);
      expect(named[0]).not.toContain(BYO.clientSecret);
    },
  );

  it('received nothing of the operator’s client, nor any client, from start to end', () => {
    expectNothingOfTheOperatorsClient(hostile.requests);
    expect(presenting(hostile.requests)).toEqual([]);
  });
});

describe('the same server once its metadata names its own issuer', () => {
  it('is used, with a registration of Gatehouse: the operator’s client, for another issuer, is never presented there', async () => {
    hostile.claimedIssuer = hostile.issuer;
    const from = hostile.requests.length;
    const response = await api(stack, 'POST', '/v1/connect/links', {
      user: 'u_own',
      app: 'hostile',
    });
    const body = (await response.json()) as { url: string };
    expect(response.status).toBe(201);
    const walk = await walkMcpLink(body.url);
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    const sent = hostile.requests.slice(from);
    const registered = sent.filter((request) => request.url === '/as/register');
    expect(registered).toHaveLength(1);
    const authorize = sent.find((request) => request.url.startsWith('/as/authorize'));
    expect(new URL(authorize?.url ?? '/', hostile.issuer).searchParams.get('client_id')).toMatch(
      /^registered-/,
    );
    expect(sent.filter((request) => request.url === '/as/token')).toHaveLength(1);
    expectNothingOfTheOperatorsClient(hostile.requests);
  });
});

describe('resource metadata describing another resource', () => {
  it('is refused when a link is made, with 409 conflict naming both', async () => {
    const elsewhere = 'https://mcp.northwind.example/mcp';
    hostile.claimedIssuer = hostile.issuer;
    hostile.claimedResource = elsewhere;
    const from = hostile.requests.length;
    const response = await api(stack, 'POST', '/v1/connect/links', {
      user: 'u_r',
      app: 'hostile-dcr',
    });
    const body = (await response.json()) as {
      error: { code: string; message: string; resource: string; claimed_resource: string };
    };
    hostile.claimedResource = hostile.serverUrl;
    expect({ status: response.status, body }).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict' } },
    });
    expect(body.error).toMatchObject({ resource: hostile.serverUrl, claimed_resource: elsewhere });
    expect(body.error.message).toContain(elsewhere);
    expect(presenting(hostile.requests.slice(from))).toEqual([]);
  });
});

describe('a connection recorded with the operator’s client at another issuer than the client’s', () => {
  it('never sends the client there again: its refresh expires it without a token request', async () => {
    // As the flow before this check could record one: the operator's client, this server.
    const [connection] = await stack.db.sql<{ id: string }[]>`
      select c.id from connections c join connected_users u on u.id = c.connected_user_id
      where u.external_id = 'u_own'`;
    if (!connection) throw new Error('no connection of u_own');
    await stack.db.sql`
      update mcp_connection_auth m
      set client_kind = 'byo', registration_id = null, client_id = ${BYO.clientId},
          mcp_oauth_client_id = (select id from mcp_oauth_clients where client_id = ${BYO.clientId})
      where m.connection_id = ${connection.id}`;
    const from = hostile.requests.length;
    const refresh = await api(stack, 'POST', `/v1/connections/${connection.id}/refresh`);
    const body = (await refresh.json()) as { error: { code: string } };
    expect({ status: refresh.status, body }).toMatchObject({
      status: 409,
      body: { error: { code: 'connection_expired' } },
    });
    expect(hostile.requests.slice(from)).toEqual([]);
    expectNothingOfTheOperatorsClient(hostile.requests);
  });
});
