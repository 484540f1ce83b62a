import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApiKey } from '../../activities/db/api-keys.js';
import { createAuthConfig } from '../../activities/db/auth-configs.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { setGroupRoles } from '../../activities/db/role-mappings.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import { loadConfig, type Config } from '../config.js';
import { createConfiguredSql, type Sql } from '../database/client.js';
import { migrate } from '../database/migrate.js';
import { startDemoApp, type DemoApp } from '../demo-app/index.js';
import { walkConnectLink } from '../demo-app/scripted-connect.js';
import { startEmbeddedPostgres } from '../dev/embedded-postgres.js';
import { freePort } from '../dev/free-port.js';
import { startServerEverything } from '../dev/server-everything.js';
import { startTemporalDevServer } from '../dev/temporal-dev-server.js';
import { startDevIdentityProvider, type DevClient } from '../dev-idp/index.js';
import { resolveTemporalCli } from '../tools/temporal-binaries.js';
import { startService, untilReady } from './processes.js';
import { connectClient } from '../temporal/connection.js';
import type { Client } from '@temporalio/client';

export interface BenchStack {
  config: Config;
  sql: Sql;
  /** One per API process; the load takes turns. */
  apiUrls: string[];
  /** A Temporal client as the API makes it, for the engine-floor scenario. */
  temporal: Client;
  demo: DemoApp;
  /** The calling agent's key: standard, so it calls but cannot decide or govern. */
  key: string;
  /** Another agent's full key, which decides the calls held for `key` (four eyes). */
  approverKey: string;
  /**
   * `@modelcontextprotocol/server-everything` registered as the remote MCP app `everything`:
   * its Streamable HTTP endpoint, for the direct `tools/call` baseline.
   */
  mcpServerUrl: string;
  /** A connected user of the demo app, and a valid token of theirs for the direct baseline. */
  user: string;
  connectionId: string;
  accessToken: string;
  settings: Record<string, string | number | boolean>;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine, as `gatehouse dev` runs it but throwaway: embedded Postgres,
 * an in-memory Temporal dev server, the worker, the API and the demo app, each on a free port,
 * with one user connected through the real hosted connect flow, and sign-in to the console
 * through the dev identity provider (infra/dev-idp).
 */
export async function startBenchStack(options: {
  poolSize: number;
  /** Processes of each kind: 1 each, or 2 each for --scale-out. */
  apis: number;
  workers: number;
  /** Folder for V8 CPU profiles of the API and worker processes (`--profile <dir>`). */
  profileDir?: string;
}): Promise<BenchStack> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  try {
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bench-'));
    await chmod(dir, 0o755);
    stops.push(() => rm(dir, { recursive: true, force: true }));

    const [pg, temporal, demo, everything] = await Promise.all([
      (async () =>
        startEmbeddedPostgres({
          directory: path.join(dir, 'postgres'),
          port: await freePort(),
          password: randomBytes(12).toString('hex'),
        }))(),
      (async () =>
        startTemporalDevServer({
          cli: await resolveTemporalCli(),
          port: await freePort(),
          uiPort: null,
          namespace: 'default',
        }))(),
      startDemoApp({ accessTokenTtlSeconds: 3600 }),
      startServerEverything(),
    ]);
    stops.push(
      () => pg.stop(),
      () => temporal.stop(),
      () => demo.stop(),
      () => everything.stop(),
    );

    const baseEnv = {
      DATABASE_URL: pg.url('postgres'),
      DATABASE_POOL_SIZE: String(options.poolSize),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'gatehouse-bench',
      API_PORT: String(await freePort()),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      APP_URLS: JSON.stringify({ acme: demo.url }),
      // The remote MCP server runs on loopback, beside the rest.
      MCP_APPS_ALLOW_PRIVATE: 'true',
      // So is the approval scenarios' webhook receiver (./approval-person.ts).
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // And the approval notices scenario's SMTP relay (./approval-notices.ts).
      NOTIFY_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'error',
    };
    // Sign-in for the console, as `gatehouse dev` sets it up: the dev provider in this process,
    // with the API's callback registered as its one client's redirect URI.
    const consoleClient: DevClient = {
      client_id: 'gatehouse-bench-console',
      client_secret: randomBytes(24).toString('base64url'),
      redirect_uris: [`${loadConfig(baseEnv).api.publicUrl}/console/callback`],
    };
    const idp = await startDevIdentityProvider({ clients: [consoleClient] });
    stops.push(() => idp.close());
    const env = {
      ...baseEnv,
      OIDC_ISSUER_URL: idp.issuer,
      OIDC_CLIENT_ID: consoleClient.client_id,
      OIDC_CLIENT_SECRET: consoleClient.client_secret,
      OIDC_SCOPES: 'openid email profile groups',
    };
    const config = loadConfig(env);
    // Written by each process as it exits: where a call's CPU goes (README, Benchmark it).
    // Node 20 takes --cpu-prof only on the command line, not in NODE_OPTIONS.
    const profiled = (name: string): string[] =>
      options.profileDir
        ? ['--cpu-prof', `--cpu-prof-dir=${path.join(options.profileDir, name)}`]
        : [];
    await migrate(config.database.url);
    const sql = createConfiguredSql(config.database);
    stops.push(() => sql.end({ timeout: 5 }));

    const client = { clientId: 'gatehouse-bench', clientSecret: randomBytes(16).toString('hex') };
    await demo.registerClient({
      ...client,
      redirectUris: [connectRedirectUri(config.api)],
    });
    const environment = await ensureEnvironment(sql, 'bench');
    // Alice (group `approvers` at the dev provider) signs in to the console as an approver.
    await setGroupRoles(sql, environment.id, 'approvers', ['approver']);
    await createAuthConfig(sql, config.encryption, {
      environmentId: environment.id,
      app: 'acme',
      name: 'demo app',
      ...client,
    });
    const keyOf = async (name: string, access: 'standard' | 'full') =>
      (
        await createApiKey(sql, {
          environmentId: environment.id,
          environmentName: environment.name,
          name,
          access,
          agentId: name,
        })
      ).key;
    const key = await keyOf('bench-agent', 'standard');
    const approverKey = await keyOf('bench-approver', 'full');

    // The API and the worker run as the production processes do, each with its own event loop.
    // Any number of each share one Temporal and one Postgres: they keep no state of their own.
    for (let i = 0; i < options.workers; i++) {
      const worker = startService('worker', env, profiled(`worker-${String(i + 1)}`));
      stops.push(() => worker.stop());
    }
    const apiUrls = [config.api.publicUrl];
    const first = startService('api', env, profiled('api-1'));
    stops.push(() => first.stop());
    for (let i = 1; i < options.apis; i++) {
      // Every API process answers for the same public URL (the connect callback's), as behind
      // a load balancer; each listens on its own port.
      const port = await freePort();
      const service = startService(
        'api',
        { ...env, API_PORT: String(port), PUBLIC_URL: config.api.publicUrl },
        profiled(`api-${String(i + 1)}`),
      );
      stops.push(() => service.stop());
      apiUrls.push(`http://127.0.0.1:${String(port)}`);
    }
    for (const url of apiUrls) await untilReady(url);
    const api = { url: config.api.publicUrl };
    const temporalClient = await connectClient(config.temporal, config.encryption);
    stops.push(() => temporalClient.connection.close());

    // One user, connected the way an end user would: link → consent at the app → callback.
    const user = 'u_bench';
    const link = await fetch(`${api.url}/v1/connect/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user, app: 'acme' }),
    });
    const { url } = (await link.json()) as { url: string };
    await walkConnectLink(url, { username: user });
    const [row]: [{ id: string }?] = await sql`
      select c.id from connections c join connected_users u on u.id = c.connected_user_id
      where u.external_id = ${user} and c.status = 'active'`;
    if (!row) throw new Error('the bench user did not get a connection');
    // Token export needs full access: the agent's standard key cannot.
    const exported = await fetch(`${api.url}/v1/connections/${row.id}/export`, {
      headers: { authorization: `Bearer ${approverKey}` },
    });
    const { access_token: accessToken } = (await exported.json()) as { access_token: string };

    // A remote MCP server as an operator registers it, trusting its annotations: echo is a read.
    const registered = await fetch(`${api.url}/v1/mcp-apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${approverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'everything',
        name: 'Everything',
        server_url: everything.url,
        trust_annotations: true,
      }),
    });
    if (registered.status !== 200) {
      throw new Error(`registering server-everything failed: ${await registered.text()}`);
    }

    return {
      config,
      sql,
      apiUrls,
      temporal: temporalClient,
      demo,
      key,
      approverKey,
      user,
      connectionId: row.id,
      accessToken,
      mcpServerUrl: everything.url,
      settings: {
        databasePoolSize: config.database.poolSize,
        logLevel: config.logLevel,
        processes: `${String(options.apis)} api and ${String(options.workers)} worker processes (gatehouse api, gatehouse worker)`,
        upstreamTimeoutMs: config.upstream.timeoutMs,
        temporal: 'dev server (in memory)',
        postgres: 'embedded',
        signIn: 'dev identity provider (infra/dev-idp) in the bench process',
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
