// Connecting a user to a remote MCP app whose authorization server Gatehouse registers itself
// with: the MCP SDK's example OAuth server, strict about resources,
// through the hosted connect flow, showing what the authorization server received.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readTokens, saveRefreshedTokens } from '../../activities/db/connections.js';
import { findRegistration } from '../../activities/db/mcp-client-registrations.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import { historyText } from '../support/workflow-history.js';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { walkMcpLink } from '../support/mcp-connect-walk.js';
import { startMcpExampleServer, type McpExampleServer } from '../support/mcp-example-server.js';

let stack: McpAuthStack;
let server: McpExampleServer;
/** What set-up started, stopped even after a failed set-up (whose error is the one to read). */
const stops: (() => Promise<void>)[] = [];

const BRANDING = {
  client_name: 'Northwind Assistant',
  logo_uri: 'https://northwind.example/logo.png',
  client_uri: 'https://northwind.example',
  policy_uri: 'https://northwind.example/privacy',
  tos_uri: 'https://northwind.example/terms',
};

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startMcpExampleServer().then((started) => (stops.push(() => started.stop()), started)),
  ]);
  await registerMcpApp(stack, { id: 'demo-mcp', name: 'Demo MCP', serverUrl: server.serverUrl });
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

async function newLink(user: string): Promise<string> {
  const response = await api(stack, 'POST', '/v1/connect/links', { user, app: 'demo-mcp' });
  const body = (await response.json()) as { url: string };
  expect({ status: response.status, body }).toMatchObject({ status: 201 });
  return body.url;
}

async function connectionOf(user: string) {
  const [row] = await stack.db.sql<
    {
      id: string;
      status: string;
      accessTokenSealed: string;
      clientKind: string;
      clientId: string;
    }[]
  >`
    select c.id, c.status, c.access_token_sealed, m.client_kind, m.client_id
    from connections c join connected_users u on u.id = c.connected_user_id
    left join mcp_connection_auth m on m.connection_id = c.id
    where u.external_id = ${user} and c.status <> 'revoked'`;
  if (!row) throw new Error(`no connection for ${user}`);
  return row;
}

/** The user's access token, as token export hands it out. */
async function exported(connectionId: string) {
  const response = await api(stack, 'GET', `/v1/connections/${connectionId}/export`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    access_token: string;
    refresh_token: string | null;
    app: string;
  };
}

describe('with no way to identify Gatehouse', () => {
  it('refuses the link with 409 auth_config_required saying what to set', async () => {
    const response = await api(stack, 'POST', '/v1/connect/links', {
      user: 'u_none',
      app: 'demo-mcp',
    });
    const body = (await response.json()) as {
      error: { code: string; message: string; issuer: string };
    };
    expect(response.status).toBe(409);
    expect(body.error.code).toBe('auth_config_required');
    expect(body.error.issuer).toBe(server.issuer);
    expect(body.error.message).toContain('PUT /v1/mcp-client-branding');
    expect(body.error.message).toContain('dynamic client registration');
    expect(body.error.message).toContain('POST /v1/mcp-oauth-clients');
    // Nothing reached the authorization server beyond its metadata.
    const sent = await server.authRequests();
    expect(sent.filter((request) => request.url.startsWith('/register'))).toEqual([]);
  });
});

describe('dynamic client registration with the branding', () => {
  let connectionId: string;

  beforeAll(async () => {
    const response = await api(stack, 'PUT', '/v1/mcp-client-branding', BRANDING);
    expect(response.status).toBe(200);
  });

  it('connects through the hosted link: registered with the branding, authorised with resource and S256', async () => {
    const walk = await walkMcpLink(await newLink('u_dcr'));
    if (walk.stoppedAt !== 'callback')
      throw new Error(`stopped at ${walk.stoppedAt}: ${walk.page.html}`);
    expect(walk.page.status).toBe(200);
    expect(walk.page.html).toContain('Demo MCP');

    const sent = await server.authRequests();
    const registrations = sent.filter((request) => request.url === '/register');
    expect(registrations).toHaveLength(1);
    expect(registrations[0]?.body).toMatchObject({
      ...BRANDING,
      redirect_uris: [connectRedirectUri(stack.config.api)],
      grant_types: ['authorization_code', 'refresh_token'],
      // The strongest method this server offers (it lists client_secret_post and none).
      token_endpoint_auth_method: 'client_secret_post',
    });
    const authorize = sent.find((request) => request.url.startsWith('/authorize'));
    const query = new URL(authorize?.url ?? '', server.issuer).searchParams;
    const clientId = query.get('client_id');
    expect(clientId).toBeTruthy();
    expect(query.get('resource')).toBe(server.serverUrl);
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // From the server's protected resource metadata (`scopes_supported`).
    expect(query.get('scope')).toBe('mcp:tools');
    expect(query.get('redirect_uri')).toBe(connectRedirectUri(stack.config.api));

    const token = sent.find((request) => request.url === '/token');
    expect(token?.status).toBe(200);
    expect(token?.body).toMatchObject({
      grant_type: 'authorization_code',
      client_id: clientId,
      resource: server.serverUrl,
      redirect_uri: connectRedirectUri(stack.config.api),
    });
    expect(token?.body?.code_verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(token?.body?.client_secret).toEqual(expect.any(String));

    const connection = await connectionOf('u_dcr');
    connectionId = connection.id;
    expect(connection).toMatchObject({ status: 'active', clientKind: 'dcr', clientId });
    const tokens = await exported(connection.id);
    expect(tokens.app).toBe('demo-mcp');
    // Sealed at rest: the stored value is not the token.
    expect(connection.accessTokenSealed).not.toContain(tokens.access_token);
    expect(connection.accessTokenSealed.startsWith('v1.')).toBe(true);
  });

  it('hands out a token the MCP server accepts (its resource checked strictly)', async () => {
    const { access_token } = await exported(connectionId);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.serverUrl), {
        requestInit: { headers: { authorization: `Bearer ${access_token}` } },
      }),
    );
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it('keeps every secret out of the connect workflows: registration secret, code, verifier, tokens', async () => {
    const [attempt] = await stack.db.sql<{ id: string; registrationId: string }[]>`
      select a.id, m.registration_id from oauth_attempts a
      join mcp_oauth_attempts m on m.attempt_id = a.id
      join connect_links l on l.id = a.link_id
      join connected_users u on u.id = l.connected_user_id
      where u.external_id = 'u_dcr'`;
    if (!attempt) throw new Error('no attempt');
    const registration = await findRegistration(
      stack.db.sql,
      stack.config.encryption,
      attempt.registrationId,
    );
    const token = (await server.authRequests()).find((r) => r.url === '/token');
    const secrets = [
      registration?.registration.client_secret,
      token?.body?.code,
      token?.body?.code_verifier,
      (await exported(connectionId)).access_token,
    ];
    expect(secrets.every((secret) => typeof secret === 'string' && secret.length > 0)).toBe(true);
    const histories = [
      await historyText(stack.api.temporal, `connect-start/${attempt.id}`),
      await historyText(stack.api.temporal, `connect/${attempt.id}`),
    ].join('\n');
    // Decoded (the check would pass on ciphertext): the start's answer is the authorize URL.
    expect(histories).toContain('authorizationUrl');
    for (const secret of secrets) expect(histories).not.toContain(String(secret));
  });

  it('reuses the registration for the next user', async () => {
    const before = (await server.authRequests()).filter((r) => r.url === '/register').length;
    const walk = await walkMcpLink(await newLink('u_dcr_2'));
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    const sent = await server.authRequests();
    expect(sent.filter((r) => r.url === '/register')).toHaveLength(before);
    const first = await connectionOf('u_dcr');
    expect((await connectionOf('u_dcr_2')).clientId).toBe(first.clientId);
  });

  it('registers anew once the branding changes', async () => {
    await api(stack, 'PUT', '/v1/mcp-client-branding', {
      ...BRANDING,
      client_name: 'Northwind AI',
    });
    const walk = await walkMcpLink(await newLink('u_dcr_3'));
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    const registrations = (await server.authRequests()).filter((r) => r.url === '/register');
    expect(registrations.at(-1)?.body).toMatchObject({ client_name: 'Northwind AI' });
    expect((await connectionOf('u_dcr_3')).clientId).not.toBe(
      (await connectionOf('u_dcr')).clientId,
    );
    // The connections made with the earlier registration keep it.
    expect((await connectionOf('u_dcr')).clientKind).toBe('dcr');
  });

  it('expires a connection whose server issued no refresh token at its refresh, with a reconnect link that renews it', async () => {
    const before = (await server.authRequests()).filter((r) => r.url === '/token').length;
    const refresh = await api(stack, 'POST', `/v1/connections/${connectionId}/refresh`);
    const body = (await refresh.json()) as { error: { code: string; reconnect_url: string } };
    expect(refresh.status).toBe(409);
    expect(body.error.code).toBe('connection_expired');
    // This server issues no refresh tokens: nothing was asked of it.
    expect((await server.authRequests()).filter((r) => r.url === '/token')).toHaveLength(before);

    const walk = await walkMcpLink(body.error.reconnect_url);
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    const renewed = await connectionOf('u_dcr');
    expect(renewed).toMatchObject({ id: connectionId, status: 'active' });
    expect((await exported(connectionId)).access_token).toEqual(expect.any(String));
  });

  it('registers anew, once, when the authorization server no longer knows its registration (invalid_client at a refresh)', async () => {
    const connection = await connectionOf('u_dcr_3');
    // An authorization server that issues refresh tokens would have given one.
    const tokens = await readTokens(stack.db.sql, stack.config.encryption, connection.id);
    if (!tokens) throw new Error('no tokens');
    await saveRefreshedTokens(
      stack.db.sql,
      stack.config.encryption,
      connection.id,
      { ...tokens, refreshToken: 'refresh-token-of-u_dcr_3' },
      null,
    );
    // It keeps clients in memory: restarted, it knows none.
    await server.restart();
    const from = (await server.authRequests()).length;
    const refresh = await api(stack, 'POST', `/v1/connections/${connection.id}/refresh`);
    const body = (await refresh.json()) as { error: { code: string; reconnect_url: string } };
    expect(refresh.status).toBe(409);
    expect(body.error.code).toBe('connection_expired');
    const refused = (await server.authRequests()).slice(from);
    expect(refused.map((r) => [r.url, r.status])).toEqual([['/token', 400]]);
    expect(refused[0]?.body).toMatchObject({
      grant_type: 'refresh_token',
      client_id: connection.clientId,
      resource: server.serverUrl,
    });

    const walk = await walkMcpLink(body.error.reconnect_url);
    expect(walk.stoppedAt === 'callback' && walk.page.status).toBe(200);
    const sent = (await server.authRequests()).slice(from);
    expect(sent.filter((r) => r.url === '/register')).toHaveLength(1);
    const renewed = await connectionOf('u_dcr_3');
    expect(renewed).toMatchObject({ id: connection.id, status: 'active' });
    expect(renewed.clientId).not.toBe(connection.clientId);
    // The next user reuses the new registration: one registration for the invalid_client.
    const next = await walkMcpLink(await newLink('u_dcr_4'));
    expect(next.stoppedAt === 'callback' && next.page.status).toBe(200);
    expect(
      (await server.authRequests()).slice(from).filter((r) => r.url === '/register'),
    ).toHaveLength(1);
    expect((await connectionOf('u_dcr_4')).clientId).toBe(renewed.clientId);
  });
});
