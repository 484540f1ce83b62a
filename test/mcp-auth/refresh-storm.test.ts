// An MCP app's connection refreshes through the same `refresh/<connection id>` workflow as any
// connection: one token request however many callers, the rotated refresh
// token kept. The SDK's example server issues no refresh tokens, so the authorization server here
// is the demo app's (oidc-provider: refresh tokens rotated at each use). The grant is made
// through the hosted flow of its catalog app, then the connection is made an MCP app's, with the
// operator's client and the demo app's metadata as discovery found it.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  validAccessToken,
  type AccessTokenDeps,
} from '../../activities/connections/access-token.js';
import { findConnectionById, readTokens } from '../../activities/db/connections.js';
import { saveConnectionAuthorization } from '../../activities/db/mcp-authorizations.js';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;
let deps: AccessTokenDeps;
let clientId: string;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
  deps = { sql: stack.db.sql, config: stack.config, temporal: stack.temporal };
  await stack.db.sql`
    insert into mcp_apps (environment_id, id, name, server_url, auth, updated_by)
    values (${stack.environmentId}, 'tasks-mcp', 'Tasks MCP', ${`${stack.demo.url}/mcp`}, 'oauth', 'test')`;
  const response = await fetch(`${stack.api.url}/v1/mcp-oauth-clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      app: 'tasks-mcp',
      client: {
        issuer: stack.demo.url,
        ...stack.client,
        authMethod: 'client_secret_basic',
        source: 'byo',
      },
    }),
  });
  clientId = ((await response.json()) as { data: { id: string } }).data.id;
});

/** A grant at the demo app, held by a connection of the MCP app `tasks-mcp`. */
async function mcpConnection(user: string): Promise<string> {
  const link = (await (await createLink(stack, { user, app: 'acme' })).json()) as { url: string };
  expect((await walkConnectLink(link.url, { username: user })).status).toBe(200);
  const [row] = await stack.db.sql<{ id: string }[]>`
    select c.id from connections c join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user}`;
  if (!row) throw new Error('no connection');
  await stack.db
    .sql`update connections set app = 'tasks-mcp', auth_config_id = null where id = ${row.id}`;
  const discovery = await discoverOAuthServerInfo(stack.demo.url);
  await saveConnectionAuthorization(stack.db.sql, row.id, {
    clientKind: 'byo',
    mcpOAuthClientId: clientId,
    registrationId: null,
    clientId: stack.client.clientId,
    serverUrl: `${stack.demo.url}/mcp`,
    issuer: discovery.authorizationServerUrl,
    // The demo app does not take resource indicators.
    resource: null,
    scope: null,
    discovery,
  });
  return row.id;
}

describe("an MCP app's connection at an authorization server that rotates refresh tokens", () => {
  it('makes 20 concurrent callers of a stale token share one token request, and keeps the rotated refresh token', async () => {
    const id = await mcpConnection('u_mcp_storm');
    const before = await readTokens(stack.db.sql, stack.config.encryption, id);
    await stack.db.sql`update connections set access_token_expires_at = now() where id = ${id}`;
    stack.demo.resetStats();
    const results = await Promise.all(Array.from({ length: 20 }, () => validAccessToken(deps, id)));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(new Set(results.map((result) => (result.ok ? result.accessToken : ''))).size).toBe(1);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(1);

    const after = await readTokens(stack.db.sql, stack.config.encryption, id);
    expect(after?.refreshToken).toEqual(expect.any(String));
    expect(after?.refreshToken).not.toBe(before?.refreshToken);
    const connection = await findConnectionById(stack.db.sql, id);
    expect(connection).toMatchObject({ app: 'tasks-mcp', status: 'active', refreshCount: 1 });
    expect(connection?.accessTokenExpiresAt?.getTime()).toBeGreaterThan(Date.now() + 60_000);
    // The new token works at the app; the rotated refresh token serves the next refresh.
    const token = results[0]?.ok ? results[0].accessToken : '';
    const tasks = await fetch(`${stack.demo.url}/tasks`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(tasks.status).toBe(200);
    const forced = await validAccessToken(deps, id, { force: true });
    expect(forced.ok).toBe(true);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(2);
  });

  it('expires the connection when the authorization server answers invalid_grant', async () => {
    const id = await mcpConnection('u_mcp_revoked');
    await stack.demo.revokeGrants('u_mcp_revoked');
    const result = await validAccessToken(deps, id, { force: true });
    expect(result).toEqual({ ok: false, status: 'expired' });
    expect((await findConnectionById(stack.db.sql, id))?.status).toBe('expired');
  });
});
