// The MCP client the conformance suite's auth scenarios run (`conformance client --command …`,
// test/mcp-auth/conformance-auth.test.ts): for the scenario's server URL (the last argument) it
// authorises through Gatehouse's own code, as a hosted connect flow does, and then uses the
// token as a call does. Gatehouse's parts, unchanged: the start of a connect
// (beginMcpAuthorization: discovery, the client chosen, registration, the authorize URL), the
// callback's exchange (the exchangeCode activity), the tokens as stored, and scope step-up
// (recordScopeStepUp, then the connection's reconnect link). The browser's part is one GET of
// the authorize URL (the scenarios' authorization servers consent at once). Configuration comes
// from the environment the test gives (database, key ring, PUBLIC_URL); the environment named by
// CONFORMANCE_ENVIRONMENT has its MCP client branding set. MCP_CONFORMANCE_CONTEXT carries a
// pre-registered client for the scenario that has one: added as the operator's MCP OAuth client.
import {
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { createConnectLink, hashToken } from '../../activities/db/connect-links.js';
import { readTokens } from '../../activities/db/connections.js';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import {
  createMcpOAuthClient,
  selectMcpOAuthClient,
} from '../../activities/db/mcp-oauth-clients.js';
import { parkCallback } from '../../activities/db/oauth-attempts.js';
import { beginMcpAuthorization } from '../../activities/mcp-auth/begin-authorization.js';
import type { McpAuthDeps } from '../../activities/mcp-auth/deps.js';
import { recordScopeStepUp } from '../../activities/mcp-auth/step-up.js';
import { exchangeCodeActivity } from '../../activities/oauth/exchange-code.js';
import { loadConfig } from '../../infra/config.js';
import { createSql } from '../../infra/database/client.js';
import { createLogger } from '../../infra/logger.js';

/** The client id the `auth/basic-cimd` scenario expects: its own setup, not a Gatehouse URL. */
const SCENARIO_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** Step-ups one call may take before Gatehouse gives up (the spec asks for a limit). */
const MAX_STEP_UPS = 2;

const serverUrl = process.argv.at(-1) ?? '';
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'unknown';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  client_id?: string;
  client_secret?: string;
};
const config = loadConfig(process.env);
const sql = createSql(config.database.url, { max: 2 });
const logger = createLogger({ level: 'warn' }, process.stderr);
const deps: McpAuthDeps = { sql, config, logger, clientMetadataUrl: () => SCENARIO_METADATA_URL };

function say(message: string): void {
  process.stdout.write(`${message}\n`);
}

async function environmentId(): Promise<string> {
  const environment = await findEnvironmentByName(sql, process.env.CONFORMANCE_ENVIRONMENT ?? '');
  if (!environment) throw new Error('CONFORMANCE_ENVIRONMENT names no environment');
  return environment.id;
}

/** The scenario's server registered as an app, and its pre-registered client if it has one. */
async function registerApp(envId: string): Promise<string> {
  const app = `conf-${randomBytes(4).toString('hex')}`;
  await sql`
    insert into mcp_apps (environment_id, id, name, server_url, auth, updated_by)
    values (${envId}, ${app}, ${scenario}, ${serverUrl}, 'oauth', 'conformance')`;
  if (context.client_id) {
    // The operator reads the issuer from the server's metadata, as anyone can.
    const { authorizationServerUrl } = await discoverOAuthServerInfo(serverUrl);
    const created = await createMcpOAuthClient(sql, config.encryption, {
      environmentId: envId,
      app,
      issuer: authorizationServerUrl,
      clientId: context.client_id,
      clientSecret: context.client_secret,
      authMethod: 'client_secret_basic',
      source: 'byo',
    });
    if (!created.ok) throw new Error(`client not created: ${created.reason}`);
    await selectMcpOAuthClient(sql, envId, created.client.id);
  }
  return app;
}

/** One hosted connect, minus the pages: start, the browser's trip, the callback's exchange. */
async function connect(link: { id: string }): Promise<string> {
  const attemptId = uuidv7();
  const started = await beginMcpAuthorization(deps, {
    attemptId,
    linkId: link.id,
    browser: {
      ref: randomBytes(12).toString('base64url'),
      secretSha256Hex: hashToken(randomBytes(32).toString('base64url')).toString('hex'),
    },
  });
  if (!started.ok) throw new Error(`the connect did not start: ${started.code}`);
  say(`authorize: ${started.authorizationUrl}`);
  const answer = await fetch(started.authorizationUrl, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (!location) throw new Error(`the authorization server answered ${String(answer.status)}`);
  const callback = new URL(location);
  await parkCallback(sql, config.encryption, attemptId, callback.searchParams.toString());
  const outcome = await exchangeCodeActivity({ sql, config, logger })(attemptId);
  if (!outcome.ok) throw new Error(`the exchange failed: ${outcome.code}`);
  return outcome.connectionId;
}

/** What the server's last refusal of a call said, for step-up. */
let refusal: Response | undefined;

/** initialize, tools/list and tools/call with the connection's token, as a call sends it. */
async function useTools(connectionId: string): Promise<void> {
  const tokens = await readTokens(sql, config.encryption, connectionId);
  if (!tokens) throw new Error('the connection holds no token');
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), {
    requestInit: { headers: { authorization: `Bearer ${tokens.accessToken}` } },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (response.status === 403) refusal = response;
      return response;
    },
  });
  const client = new Client({ name: 'gatehouse-conformance', version: '0.1.0' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const [tool] = tools;
    if (tool) await client.callTool({ name: tool.name, arguments: {} });
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  const envId = await environmentId();
  const app = await registerApp(envId);
  const user = await upsertConnectedUser(sql, envId, `conformance-${app}`, undefined);
  const link = { environmentId: envId, connectedUserId: user.id, app, ttlSeconds: 3600 };
  const { link: first } = await createConnectLink(sql, config.encryption, {
    ...link,
    purpose: 'connect',
  });
  const connectionId = await connect(first);
  for (let stepUps = 0; ; stepUps++) {
    try {
      await useTools(connectionId);
      say('tools used');
      return;
    } catch (error) {
      const challenge = refusal ? extractWWWAuthenticateParams(refusal) : {};
      refusal = undefined;
      const insufficient =
        error instanceof StreamableHTTPError &&
        error.code === 403 &&
        challenge.error === 'insufficient_scope' &&
        challenge.scope !== undefined;
      if (!insufficient || !challenge.scope || stepUps >= MAX_STEP_UPS) throw error;
      const { stepUp, scope } = await recordScopeStepUp(sql, connectionId, challenge.scope);
      if (!stepUp) {
        throw new Error(`the server still wants ${scope}, already asked for: giving up`, {
          cause: error,
        });
      }
      say(`step-up to ${scope}`);
      const { link: again } = await createConnectLink(sql, config.encryption, {
        ...link,
        purpose: 'reconnect',
        connectionId,
      });
      await connect(again);
    }
  }
}

main()
  .then(() => sql.end({ timeout: 5 }))
  .catch(async (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    await sql.end({ timeout: 5 });
    process.exitCode = 1;
  });
