// The operator's own MCP OAuth clients at work: registered at the MCP SDK's
// example authorization server out of band, added and selected through the management
// interface; create, select, rotate and retire change what the authorization server receives.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readTokens, saveRefreshedTokens } from '../../activities/db/connections.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { walkMcpLink } from '../support/mcp-connect-walk.js';
import {
  startMcpExampleServer,
  type McpExampleServer,
  type ReceivedRequest,
} from '../support/mcp-example-server.js';

let stack: McpAuthStack;
let server: McpExampleServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startMcpExampleServer().then((started) => (stops.push(() => started.stop()), started)),
  ]);
  await registerMcpApp(stack, { id: 'byo-mcp', name: 'BYO MCP', serverUrl: server.serverUrl });
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

/** A client registered at the authorization server by hand, as an operator does. */
async function registeredAtServer(name: string) {
  const registered = await server.registerClient({
    client_name: name,
    redirect_uris: [connectRedirectUri(stack.config.api)],
    token_endpoint_auth_method: 'client_secret_post',
    grant_types: ['authorization_code', 'refresh_token'],
  });
  if (!registered.client_secret) throw new Error('the server issued no secret');
  return { clientId: registered.client_id, clientSecret: registered.client_secret };
}

/** The same client added to Gatehouse as a BYO MCP OAuth client of `byo-mcp`; its id. */
async function addClient(credentials: { clientId: string; clientSecret: string }) {
  const response = await api(stack, 'POST', '/v1/mcp-oauth-clients', {
    app: 'byo-mcp',
    client: {
      issuer: server.issuer,
      ...credentials,
      authMethod: 'client_secret_post',
      source: 'byo',
    },
  });
  const body = (await response.json()) as { data: { id: string } };
  expect({ status: response.status, body }).toMatchObject({ status: 200 });
  return body.data.id;
}

async function select(id: string) {
  const response = await api(stack, 'POST', `/v1/mcp-oauth-clients/${id}/select`);
  expect(response.status).toBe(200);
}

async function newLink(user: string): Promise<string> {
  const response = await api(stack, 'POST', '/v1/connect/links', { user, app: 'byo-mcp' });
  const body = (await response.json()) as { url: string };
  expect({ status: response.status, body }).toMatchObject({ status: 201 });
  return body.url;
}

async function connectionOf(user: string) {
  const [row] = await stack.db.sql<
    { id: string; status: string; clientKind: string; clientId: string; mcpOauthClientId: string }[]
  >`
    select c.id, c.status, m.client_kind, m.client_id, m.mcp_oauth_client_id
    from connections c join connected_users u on u.id = c.connected_user_id
    join mcp_connection_auth m on m.connection_id = c.id
    where u.external_id = ${user} and c.status <> 'revoked'`;
  if (!row) throw new Error(`no connection for ${user}`);
  return row;
}

/**
 * This authorization server issues no refresh tokens; one that does would have given this one,
 * so that a refresh has something to send.
 */
async function giveRefreshToken(connectionId: string, refreshToken: string) {
  const tokens = await readTokens(stack.db.sql, stack.config.encryption, connectionId);
  if (!tokens) throw new Error('no tokens');
  await saveRefreshedTokens(
    stack.db.sql,
    stack.config.encryption,
    connectionId,
    { ...tokens, refreshToken },
    null,
  );
}

/** What the authorization server received since `from` requests ago. */
async function sentSince(from: number): Promise<ReceivedRequest[]> {
  return (await server.authRequests()).slice(from);
}

const authorizeOf = (sent: ReceivedRequest[]) =>
  new URL(sent.find((r) => r.url.startsWith('/authorize'))?.url ?? '/', server.issuer).searchParams;
const tokenRequests = (sent: ReceivedRequest[]) => sent.filter((r) => r.url === '/token');

let first: { id: string; clientId: string; clientSecret: string };
let second: { id: string; clientId: string; clientSecret: string };

describe('a selected MCP OAuth client', () => {
  it('is what the authorization server receives, with its secret on the token request; nothing is registered', async () => {
    const credentials = await registeredAtServer('Northwind (operator)');
    first = { id: await addClient(credentials), ...credentials };
    await select(first.id);
    const from = (await server.authRequests()).length;
    const walk = await walkMcpLink(await newLink('u_byo'));
    if (walk.stoppedAt !== 'callback') throw new Error(`stopped at ${walk.stoppedAt}`);
    expect(walk.page.status).toBe(200);

    const sent = await sentSince(from);
    expect(sent.filter((r) => r.url === '/register')).toEqual([]);
    const query = authorizeOf(sent);
    expect(query.get('client_id')).toBe(first.clientId);
    expect(query.get('resource')).toBe(server.serverUrl);
    expect(query.get('code_challenge_method')).toBe('S256');
    const [token] = tokenRequests(sent);
    expect(token?.status).toBe(200);
    // Its authMethod, client_secret_post: id and secret in the body.
    expect(token?.body).toMatchObject({
      client_id: first.clientId,
      client_secret: first.clientSecret,
      resource: server.serverUrl,
    });
    expect(await connectionOf('u_byo')).toMatchObject({
      status: 'active',
      clientKind: 'byo',
      clientId: first.clientId,
      mcpOauthClientId: first.id,
    });
  });

  it('changes with select: the next connect presents the client selected then', async () => {
    const credentials = await registeredAtServer('Northwind (second)');
    second = { id: await addClient(credentials), ...credentials };
    await select(second.id);
    const from = (await server.authRequests()).length;
    const walk = await walkMcpLink(await newLink('u_byo_2'));
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    const sent = await sentSince(from);
    expect(authorizeOf(sent).get('client_id')).toBe(second.clientId);
    expect(tokenRequests(sent)[0]?.body).toMatchObject({ client_id: second.clientId });
    expect((await connectionOf('u_byo_2')).mcpOauthClientId).toBe(second.id);
    // The first user's connection remembers the client that made it.
    expect((await connectionOf('u_byo')).mcpOauthClientId).toBe(first.id);
  });

  it('is rotated at the next token request: a wrong secret is refused as invalid_client, named in the log, and nothing is registered instead', async () => {
    const from = (await server.authRequests()).length;
    const walk = await walkMcpLink(await newLink('u_byo_3'), {
      // Between the authorize request and the callback's token request.
      beforeCallback: async () => {
        const response = await api(stack, 'POST', `/v1/mcp-oauth-clients/${second.id}/rotate`, {
          clientSecret: 'not-the-secret-the-server-issued',
        });
        expect(response.status).toBe(200);
      },
    });
    if (walk.stoppedAt !== 'callback') throw new Error(`stopped at ${walk.stoppedAt}`);
    // The end user sees the branded page; nothing was connected.
    expect(walk.page.status).toBe(502);
    expect(walk.page.html).toContain('BYO MCP did not accept the sign-in');
    const sent = await sentSince(from);
    const tokens = tokenRequests(sent);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]?.body).toMatchObject({
      client_id: second.clientId,
      client_secret: 'not-the-secret-the-server-issued',
    });
    expect(tokens[0]?.status).toBe(400);
    expect(sent.filter((r) => r.url === '/register')).toEqual([]);
    const named = stack.workerLogs.filter(
      (line) => line.includes(second.id) && line.includes('invalid_client'),
    );
    expect(named).toHaveLength(1);
    expect(named[0]).not.toContain('not-the-secret');
  });

  it('is rotated back: the right secret connects again', async () => {
    const response = await api(stack, 'POST', `/v1/mcp-oauth-clients/${second.id}/rotate`, {
      clientSecret: second.clientSecret,
    });
    expect(response.status).toBe(200);
    const walk = await walkMcpLink(await newLink('u_byo_3'));
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    expect((await connectionOf('u_byo_3')).mcpOauthClientId).toBe(second.id);
  });

  it('is presented as it is now at a refresh; refused there as invalid_client, it is named, the connection is left as it was, and nothing is registered', async () => {
    const connection = await connectionOf('u_byo');
    await giveRefreshToken(connection.id, 'refresh-token-of-u_byo');
    const rotated = await api(stack, 'POST', `/v1/mcp-oauth-clients/${first.id}/rotate`, {
      clientSecret: 'a-secret-the-server-never-issued',
    });
    expect(rotated.status).toBe(200);
    const from = (await server.authRequests()).length;
    const refresh = await api(stack, 'POST', `/v1/connections/${connection.id}/refresh`);
    const body = (await refresh.json()) as {
      error: { code: string; message: string; mcp_oauth_client_id: string };
    };
    expect(refresh.status).toBe(409);
    expect(body.error.code).toBe('auth_config_required');
    expect(body.error.mcp_oauth_client_id).toBe(first.id);
    expect(body.error.message).toContain(`refused MCP OAuth client ${first.id}`);
    expect(body.error.message).not.toContain('a-secret-the-server-never-issued');
    const sent = await sentSince(from);
    expect(sent.filter((r) => r.url === '/register')).toEqual([]);
    const tokens = tokenRequests(sent);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]?.body).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: 'refresh-token-of-u_byo',
      resource: server.serverUrl,
      client_id: first.clientId,
      client_secret: 'a-secret-the-server-never-issued',
    });
    expect((await connectionOf('u_byo')).status).toBe('active');
    const restored = await api(stack, 'POST', `/v1/mcp-oauth-clients/${first.id}/rotate`, {
      clientSecret: first.clientSecret,
    });
    expect(restored.status).toBe(200);
  });

  it('once retired, expires the connections it made at their next refresh (no token request), and their reconnect link uses the client selected then', async () => {
    const connection = await connectionOf('u_byo_2');
    // With a refresh token to send, the refresh would ask the server, but for the retirement.
    await giveRefreshToken(connection.id, 'refresh-token-of-u_byo_2');
    expect((await api(stack, 'POST', `/v1/mcp-oauth-clients/${second.id}/retire`)).status).toBe(
      200,
    );
    await select(first.id);
    const from = (await server.authRequests()).length;
    const refresh = await api(stack, 'POST', `/v1/connections/${connection.id}/refresh`);
    const body = (await refresh.json()) as { error: { code: string; reconnect_url: string } };
    expect(refresh.status).toBe(409);
    expect(body.error.code).toBe('connection_expired');
    expect(await sentSince(from)).toEqual([]);
    const expired = await api(stack, 'GET', `/v1/connections/${connection.id}`);
    expect(((await expired.json()) as { status: string }).status).toBe('expired');

    const walk = await walkMcpLink(body.error.reconnect_url);
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    expect(authorizeOf(await sentSince(from)).get('client_id')).toBe(first.clientId);
    expect(await connectionOf('u_byo_2')).toMatchObject({
      id: connection.id,
      status: 'active',
      mcpOauthClientId: first.id,
    });
  });
});

describe('a selected client for another authorization server', () => {
  it('is not presented; without branding the 409 says whose issuer it is', async () => {
    const created = await api(stack, 'POST', '/v1/mcp-oauth-clients', {
      app: 'byo-mcp',
      client: {
        issuer: 'https://auth.other.example/',
        clientId: 'elsewhere',
        authMethod: 'none',
        source: 'byo',
      },
    });
    const other = { client: ((await created.json()) as { data: { id: string } }).data };
    await select(other.client.id);
    const response = await api(stack, 'POST', '/v1/connect/links', {
      user: 'u_other',
      app: 'byo-mcp',
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status).toBe(409);
    expect(body.error.code).toBe('auth_config_required');
    expect(body.error.message).toContain(
      `The selected MCP OAuth client ${other.client.id} is for the issuer https://auth.other.example/, not ${server.issuer}`,
    );
  });
});
