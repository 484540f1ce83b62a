import path from 'node:path';
import { findCallerByKey, createApiKey, type NewApiKey } from '../../activities/db/api-keys.js';
import { createAuthConfig, findEnabledAuthConfig } from '../../activities/db/auth-configs.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { startApiServer } from '../../api/server.js';
import { createWorker } from '../../worker/worker.js';
import { LOCAL_DATABASE, localPostgresDir } from '../cli/cli-database.js';
import { loadConfig, type Config } from '../config.js';
import { createConfiguredSql, type Sql } from '../database/client.js';
import { migrate } from '../database/migrate.js';
import { startDemoApp } from '../demo-app/index.js';
import type { Logger } from '../logger.js';
import { connectClient, connectWorker } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { resolveTemporalCli } from '../tools/temporal-binaries.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { pickDevPorts, type ReplacedPort } from './dev-ports.js';
import { dataDir, loadOrCreateLocalState, saveLocalState, type LocalState } from './local-state.js';
import { startTemporalDevServer } from './temporal-dev-server.js';

export const DEV_ENVIRONMENT = 'development';
export const DEMO_APP = 'acme';
/** Where the hosted connect flow receives the OAuth redirect (served by the API). */
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';

export interface DevStack {
  apiUrl: string;
  docsUrl: string;
  temporalUiUrl: string | null;
  temporalAddress: string;
  demoAppUrl: string;
  databaseUrl: string;
  externalDatabase: boolean;
  /** Preferred ports that were taken: the banner must say so (issue 15.3). */
  replacedPorts: ReplacedPort[];
  /** Standard key of agent `demo-agent`: runs actions and the proxy, cannot govern itself. */
  agentKey: string;
  /** Full business key of agent `admin`: management, policies and approval decisions. */
  adminKey: string;
  stop(): Promise<void>;
}

/**
 * DESIGN.md §3: a governed agent cannot approve its own calls or rewrite its policy, so the
 * quick start needs one key to call with and another to decide with.
 */
export const DEV_KEYS = {
  agentKey: { name: 'demo agent', access: 'standard', agentId: 'demo-agent', audience: 'backend' },
  adminKey: { name: 'admin', access: 'full', agentId: 'admin', audience: 'business' },
} as const satisfies Record<string, Pick<NewApiKey, 'name' | 'access' | 'agentId' | 'audience'>>;

/** Seeds what makes the demo work out of the box: the environment, two keys, the acme client. */
async function seedDevelopment(
  sql: Sql,
  config: Config,
  state: LocalState,
): Promise<Pick<DevStack, keyof typeof DEV_KEYS>> {
  const environment = await ensureEnvironment(sql, DEV_ENVIRONMENT);
  let saved = state;
  const ensureKey = async (field: keyof typeof DEV_KEYS): Promise<string> => {
    const kept = saved[field];
    // A kept key the database no longer knows (.data/postgres deleted) is replaced, not printed.
    if (kept && (await findCallerByKey(sql, kept))) return kept;
    const { key } = await createApiKey(sql, {
      environmentId: environment.id,
      environmentName: environment.name,
      ...DEV_KEYS[field],
    });
    saved = await saveLocalState({ ...saved, [field]: key });
    return key;
  };
  const agentKey = await ensureKey('agentKey');
  const adminKey = await ensureKey('adminKey');
  if (!(await findEnabledAuthConfig(sql, environment.id, DEMO_APP))) {
    await createAuthConfig(sql, config.encryption, {
      environmentId: environment.id,
      app: DEMO_APP,
      name: 'Acme demo app (gatehouse dev)',
      clientId: state.demoApp.clientId,
      clientSecret: state.demoApp.clientSecret,
    });
  }
  return { agentKey, adminKey };
}

/**
 * `gatehouse dev`: the whole service on one machine with embedded defaults. Anything already
 * set in the environment (DATABASE_URL, TEMPORAL_ADDRESS, API_PORT, …) wins over the defaults.
 */
export async function startDevStack(logger: Logger): Promise<DevStack> {
  let state = await loadOrCreateLocalState();
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) {
      await step().catch((error: unknown) => {
        logger.error({ err: error }, 'stop failed');
      });
    }
  };
  try {
    const { ports, replaced } = await pickDevPorts(state, {
      ...(process.env.API_PORT ? { apiPort: Number(process.env.API_PORT) } : {}),
      skip: [
        ...(process.env.DATABASE_URL ? (['postgres'] as const) : []),
        ...(process.env.TEMPORAL_ADDRESS ? (['temporal', 'temporalUi'] as const) : []),
      ],
    });
    // Only the Postgres port is recorded (the CLI looks for the running database there); the
    // others stay the preferred defaults so the printed URLs are stable across restarts.
    state = await saveLocalState({
      ...state,
      postgres: { ...state.postgres, port: ports.postgres },
    });

    let databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres({
        directory: localPostgresDir,
        port: ports.postgres,
        password: state.postgres.password,
        onLog: (line) => {
          logger.debug({ component: 'postgres' }, line.trim());
        },
      });
      stops.push(() => pg.stop());
      await pg.ensureDatabase(LOCAL_DATABASE);
      databaseUrl = pg.url(LOCAL_DATABASE);
    }

    const ownTemporal = !process.env.TEMPORAL_ADDRESS;
    const temporalAddress = process.env.TEMPORAL_ADDRESS ?? `127.0.0.1:${ports.temporal}`;
    // The configuration comes before Temporal: its UI is told where the API's codec endpoint is.
    const config = loadConfig({
      ENCRYPTION_KEY: state.encryptionKey,
      // A local webhook receiver is the usual way to try `approval.decided` on one machine.
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // The UI started below, the one origin the codec endpoint lets in (issue 19).
      ...(ownTemporal ? { TEMPORAL_UI_URL: `http://127.0.0.1:${ports.temporalUi}` } : {}),
      ...process.env,
      APP_URLS: JSON.stringify({
        ...(JSON.parse(process.env.APP_URLS ?? '{}') as object),
        [DEMO_APP]: `http://127.0.0.1:${ports.demoApp}`,
      }),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      API_PORT: String(ports.api),
    });

    let temporalUiUrl: string | null = null;
    if (ownTemporal) {
      const server = await startTemporalDevServer({
        cli: await resolveTemporalCli(),
        port: ports.temporal,
        uiPort: ports.temporalUi,
        dbFile: path.join(dataDir, 'temporal.sqlite'),
        namespace: config.temporal.namespace,
        codecEndpoint: `${config.api.publicUrl}/codec`,
        onLog: (line) => {
          logger.info({ component: 'temporal' }, line);
        },
      });
      stops.push(() => server.stop());
      temporalUiUrl = server.uiUrl;
    }

    const demoApp = await startDemoApp({
      port: ports.demoApp,
      dataDir: path.join(dataDir, 'demo-app'),
      clients: [
        {
          clientId: state.demoApp.clientId,
          clientSecret: state.demoApp.clientSecret,
          redirectUris: [connectRedirectUri(config.api)],
        },
      ],
      logger: logger.child({ component: 'demo-app' }),
    });
    stops.push(() => demoApp.stop());

    await migrate(config.database.url);
    const sql = createConfiguredSql(config.database);
    stops.push(() => sql.end({ timeout: 5 }));
    const keys = await seedDevelopment(sql, config, state);

    // One process hosts API and worker here, so the worker must not take over Ctrl-C.
    installTemporalRuntime(logger, { handleSignals: false });
    const connection = await connectWorker(config.temporal);
    stops.push(() => connection.close());
    const worker = await createWorker({ config, sql, logger, connection });
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
    });

    const temporal = await connectClient(config.temporal, config.encryption);
    stops.push(() => temporal.connection.close());
    const api = await startApiServer({ config, sql, temporal, logger });
    stops.push(() => api.close());

    return {
      apiUrl: api.url,
      docsUrl: `${api.url}/docs`,
      temporalUiUrl,
      temporalAddress,
      demoAppUrl: demoApp.url,
      databaseUrl: config.database.url,
      externalDatabase: Boolean(process.env.DATABASE_URL),
      replacedPorts: replaced,
      ...keys,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
