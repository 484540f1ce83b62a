import { createServer as createHttpServer } from 'node:http';
import path from 'node:path';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import { CODEC_PATH } from '../../api/routes/codec.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import type { RoleMapping } from '../../activities/db/role-mappings.js';
import { createApiHttpServer, startApiServer } from '../../api/server.js';
import { resumeAuditDeliveries } from '../../worker/audit-deliveries.js';
import { startAuditSealing } from '../../worker/audit-seal-schedule.js';
import { createWorker } from '../../worker/worker.js';
import { LOCAL_DATABASE, localPostgresDir } from '../cli/cli-database.js';
import { loadConfig } from '../config.js';
import { createConfiguredSql } from '../database/client.js';
import { migrate } from '../database/migrate.js';
import { startDemoApp } from '../demo-app/index.js';
import {
  DEV_ACCOUNTS,
  PROVIDER_NAME,
  startDevIdentityProvider,
  type DevAccount,
} from '../dev-idp/index.js';
import type { Logger } from '../logger.js';
import { watchHeldCalls } from '../telemetry/held-calls.js';
import { startMetricsServer } from '../telemetry/metrics-server.js';
import { startTracing } from '../telemetry/tracing.js';
import { connectClient, connectWorker } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { resolveTemporalCli } from '../tools/temporal-binaries.js';
import { closeServer } from './bind-port.js';
import { seedDevMailChannel, type DevMailChannel } from './dev-mail-channel.js';
import { DEMO_APP, DEV_ENVIRONMENT, seedDevelopment } from './dev-seed.js';
import { pickDevPorts, SERVICES, type DevPorts, type ReplacedPort } from './dev-ports.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { freePort } from './free-port.js';
import { dataDir, loadOrCreateLocalState } from './local-state.js';
import { createMailCatcher } from './mail-catcher.js';
import { startOnFreePorts } from './port-retry.js';
import { describeExit } from './service-process.js';
import { DevStartError, startStep } from './start-failure.js';
import { databaseRemedy, REMEDIES } from './start-remedies.js';
import { startTemporalDevServer } from './temporal-dev-server.js';
import { createTemporalUiFront } from './temporal-ui-front.js';

export { DEMO_APP, DEV_ENVIRONMENT, DEV_KEYS, DEV_ROLE_MAPPINGS } from './dev-seed.js';
export { DEV_PASSWORD } from '../dev-idp/index.js';

/** The console's path below PUBLIC_URL: `/console/<environment>`, and one sign-in callback. */
const CONSOLE_PATH = '/console';

export interface DevStack {
  apiUrl: string;
  docsUrl: string;
  temporalUiUrl: string | null;
  /** Opens the Temporal UI signed in to the codec with the admin key: payloads decoded. */
  temporalUiSignInUrl: string | null;
  temporalAddress: string;
  demoAppUrl: string;
  /** Where people sign in: the development environment's console, under PUBLIC_URL. */
  consoleUrl: string;
  /**
   * The dev sign-in provider this stack started, with its people; null when OIDC_ISSUER_URL
   * names a provider of the developer's own.
   */
  identityProvider: { issuer: string; name: string; accounts: readonly DevAccount[] } | null;
  /**
   * The mail catcher: its web page, its SMTP address, and whether the development environment's
   * e-mail goes there (or to a relay someone set).
   */
  mail: { url: string; smtp: string; channel: DevMailChannel };
  databaseUrl: string;
  externalDatabase: boolean;
  /** The embedded Postgres's port for this run (null with DATABASE_URL): the CLI's way in. */
  postgresPort: number | null;
  /** Where its cluster is, when not in the data folder (root, a checkout out of its reach). */
  postgresClusterElsewhere: string | null;
  /** Preferred ports that were taken: the banner must say so. */
  replacedPorts: ReplacedPort[];
  /** Where Prometheus scrapes this process (METRICS_ADDRESS), or null. */
  metricsUrl: string | null;
  /** The OTLP endpoint spans are sent to (OTEL_EXPORTER_OTLP_ENDPOINT), or null. */
  tracesEndpoint: string | null;
  /**
   * Resolves if a server the stack started (Postgres, Temporal) stops by itself: the stack no
   * longer works, and must not go on to reach whatever takes its port next.
   */
  lost: Promise<DevStartError>;
  /** Standard key of agent `demo-agent`: runs actions and the proxy, cannot govern itself. */
  agentKey: string;
  /** Full business key of agent `admin`: management, policies and approval decisions. */
  adminKey: string;
  /** The development environment's role mappings as they are (seeded on a first start). */
  roleMappings: RoleMapping[];
  stop(): Promise<void>;
}

export interface DevStackOptions {
  /** Runs once the ports are chosen, before Postgres and Temporal bind theirs (tests take
   * ports here, as another program starting at that moment would). */
  onPortsChosen?: (ports: DevPorts) => Promise<void>;
}

/**
 * `gatehouse dev`: the whole service on one machine with embedded defaults. Anything already
 * set in the environment (DATABASE_URL, TEMPORAL_ADDRESS, API_PORT, …) wins over the defaults.
 *
 * A start never dies of a port another program takes while it runs: the servers of
 * this process (API, demo app, the Temporal UI's front) bind their port when it is chosen and
 * keep it; Postgres and Temporal, which bind theirs later, start again on a free port when theirs
 * was taken, and the banner says so. Any other failure is a DevStartError naming the component
 * and what to do.
 */
export async function startDevStack(
  logger: Logger,
  options: DevStackOptions = {},
): Promise<DevStack> {
  const state = await startStep('local state', REMEDIES.localState, loadOrCreateLocalState);
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) {
      await step().catch((error: unknown) => {
        logger.error({ err: error }, 'stop failed');
      });
    }
  };
  /**
   * A stop step of the order the README promises, recorded in the log file as it happens; of a
   * server, whether it still served at its turn (nothing stopped it before its clients were
   * done with it).
   */
  const stopped =
    (component: string, run: () => Promise<void>, serving?: () => Promise<boolean>) => async () => {
      const servedUntilItsTurn = await serving?.();
      await run();
      logger.info({ component, servedUntilItsTurn }, `${component} stopped`);
    };
  let lose: (error: DevStartError) => void = () => undefined;
  const lost = new Promise<DevStartError>((resolve) => {
    lose = resolve;
  });
  /** A server that exits without being asked to ends the stack: said, never ignored. */
  const watch = (
    component: string,
    remedy: string,
    server: {
      exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
      stopping: () => boolean;
      recent: () => string;
    },
  ) => {
    void server.exited.then((exit) => {
      if (server.stopping()) return;
      const said = server.recent() ? `; its last lines:\n${server.recent()}` : '';
      const error = new DevStartError(component, remedy, {
        cause: new Error(`it stopped by itself (${describeExit(exit)})${said}`),
      });
      lose(error);
    });
  };
  const ownTemporal = !process.env.TEMPORAL_ADDRESS;
  const externalDatabase = Boolean(process.env.DATABASE_URL);
  // A developer trying their own provider sets all of OIDC_*; the dev one is then not started.
  const ownIdentityProvider = !process.env.OIDC_ISSUER_URL;
  const servers = {
    api: createApiHttpServer(),
    demoApp: createHttpServer(),
    ...(ownTemporal ? { temporalUi: createTemporalUiFront() } : {}),
    ...(ownIdentityProvider ? { identityProvider: createHttpServer() } : {}),
  };
  const uiFront = servers.temporalUi;
  const idpServer = servers.identityProvider;
  // Its two servers are bound with the others; it catches mail from the first message on.
  const mailCatcher = createMailCatcher({ logger: logger.child({ component: 'mail catcher' }) });
  stops.push(() => closeServer(servers.api));
  stops.push(() => closeServer(servers.demoApp));
  if (uiFront) stops.push(() => uiFront.close());
  if (idpServer) stops.push(() => closeServer(idpServer));
  stops.push(() => mailCatcher.close());
  try {
    const { ports, replaced } = await startStep('ports', REMEDIES.ports, () =>
      pickDevPorts(state, {
        ...(process.env.API_PORT ? { apiPort: Number(process.env.API_PORT) } : {}),
        apiHost: process.env.API_HOST ?? '127.0.0.1',
        skip: [
          ...(externalDatabase ? (['postgres'] as const) : []),
          ...(ownTemporal ? [] : (['temporal', 'temporalUi'] as const)),
          ...(ownIdentityProvider ? [] : (['identityProvider'] as const)),
        ],
        servers: {
          api: servers.api,
          demoApp: servers.demoApp,
          ...(uiFront ? { temporalUi: uiFront.server } : {}),
          ...(idpServer ? { identityProvider: idpServer } : {}),
          mailSmtp: mailCatcher.smtp,
          mail: mailCatcher.web,
        },
      }),
    );
    await options.onPortsChosen?.(ports);
    const moved = (service: keyof DevPorts, preferred: number, actual: number) => {
      const earlier = replaced.find((entry) => entry.service === SERVICES[service]);
      if (earlier) earlier.actual = actual;
      else if (actual !== preferred) {
        replaced.push({ service: SERVICES[service], preferred, actual });
      }
    };

    let postgresPort: number | null = null;
    let postgresClusterElsewhere: string | null = null;
    let databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      const { started: pg, ports: bound } = await startStep(
        'embedded Postgres',
        REMEDIES.embeddedPostgres,
        () =>
          startOnFreePorts({ postgres: ports.postgres }, (chosen) =>
            startEmbeddedPostgres({
              directory: localPostgresDir,
              port: chosen.postgres,
              password: state.postgres.password,
              detached: true,
              onLog: (line) => {
                logger.debug({ component: 'postgres' }, line.trim());
              },
            }),
          ),
      );
      stops.push(stopped('embedded Postgres', () => pg.stop(), pg.serving));
      watch('embedded Postgres', REMEDIES.lostPostgres, pg);
      // The preferred port stays the one in local-state.json, tried again at the next start;
      // where it runs now is in the running stack's record, which the CLI reads.
      moved('postgres', state.postgres.port, bound.postgres);
      postgresPort = bound.postgres;
      if (pg.cluster !== localPostgresDir) postgresClusterElsewhere = pg.cluster;
      await startStep('embedded Postgres', REMEDIES.embeddedPostgres, () =>
        pg.ensureDatabase(LOCAL_DATABASE),
      );
      databaseUrl = pg.url(LOCAL_DATABASE);
    }

    const configWith = (temporalAddress: string) =>
      loadConfig({
        ENCRYPTION_KEY: state.encryptionKey,
        // Signs audit checkpoints; kept with the other local secrets.
        ...(state.auditSigningKey ? { AUDIT_SIGNING_KEY: state.auditSigningKey } : {}),
        // A local webhook receiver is the usual way to try `approval.decided` on one machine.
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // So is an MCP server run on this machine, registered as an app.
        MCP_APPS_ALLOW_PRIVATE: 'true',
        // And a mail catcher or a Teams stand-in on this machine, for approval notifications.
        NOTIFY_ALLOW_PRIVATE: 'true',
        // A restart with the workflows unchanged skips bundling them again.
        WORKFLOW_BUNDLE_CACHE: path.join(dataDir, 'workflow-bundles'),
        // The UI's front, the one origin the codec endpoint lets in, whose sign-in link
        // the banner prints.
        ...(uiFront ? { TEMPORAL_UI_URL: uiFront.url(), CODEC_DEV_SIGN_IN_LINK: 'true' } : {}),
        ...process.env,
        APP_URLS: JSON.stringify({
          ...(JSON.parse(process.env.APP_URLS ?? '{}') as object),
          [DEMO_APP]: `http://127.0.0.1:${String(ports.demoApp)}`,
        }),
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: temporalAddress,
        API_PORT: String(ports.api),
        // People sign in to the console with the dev provider, as its one client. After the
        // environment's values: its issuer, client and claims go together.
        ...(ownIdentityProvider
          ? {
              OIDC_ISSUER_URL: `http://127.0.0.1:${String(ports.identityProvider)}`,
              OIDC_CLIENT_ID: state.identityProvider.clientId,
              OIDC_CLIENT_SECRET: state.identityProvider.clientSecret,
              OIDC_GROUPS_CLAIM: 'groups',
              // The provider releases `groups` only to a request for that scope.
              OIDC_SCOPES: 'openid email profile groups',
            }
          : {}),
      });
    // Checked before Temporal starts: a wrong variable is said before anything slow happens.
    let config = await startStep('configuration', REMEDIES.configuration, () =>
      Promise.resolve(
        configWith(process.env.TEMPORAL_ADDRESS ?? `127.0.0.1:${String(ports.temporal)}`),
      ),
    );

    let uiInternalUrl: string | null = null;
    if (uiFront) {
      const cli = await startStep('Temporal CLI', REMEDIES.temporalCli, resolveTemporalCli);
      const { started: server, ports: bound } = await startStep(
        'Temporal dev server',
        REMEDIES.temporalServer,
        async () =>
          startOnFreePorts(
            // The UI the dev server runs is reached through the front: its port is its own.
            { temporal: ports.temporal, ui: await freePort() },
            (chosen) =>
              startTemporalDevServer({
                cli,
                port: chosen.temporal,
                uiPort: chosen.ui,
                dbFile: path.join(dataDir, 'temporal.sqlite'),
                namespace: config.temporal.namespace,
                detached: true,
                // Served by the front on the UI's own origin: the session cookie reaches it.
                codecEndpoint: `${uiFront.url()}${CODEC_PATH}`,
                onLog: (line) => {
                  logger.info({ component: 'temporal' }, line);
                },
              }),
          ),
      );
      stops.push(stopped('Temporal dev server', () => server.stop(), server.serving));
      watch('Temporal dev server', REMEDIES.lostTemporal, server);
      moved('temporal', state.temporal.port, bound.temporal);
      config = configWith(server.address);
      uiInternalUrl = server.uiUrl;
    }

    const demoApp = await startStep('demo app', REMEDIES.demoApp, () =>
      startDemoApp({
        server: servers.demoApp,
        dataDir: path.join(dataDir, 'demo-app'),
        clients: [
          {
            clientId: state.demoApp.clientId,
            clientSecret: state.demoApp.clientSecret,
            redirectUris: [connectRedirectUri(config.api)],
          },
        ],
        logger: logger.child({ component: 'demo-app' }),
      }),
    );
    stops.push(stopped('demo app', () => demoApp.stop()));

    const identityProvider = idpServer
      ? await startStep('sign-in provider', REMEDIES.identityProvider, () =>
          startDevIdentityProvider({
            server: idpServer,
            clients: [
              {
                client_id: state.identityProvider.clientId,
                client_secret: state.identityProvider.clientSecret,
                redirect_uris: [`${config.api.publicUrl}${CONSOLE_PATH}/callback`],
              },
            ],
            accounts: DEV_ACCOUNTS,
            logger: logger.child({ component: 'sign-in provider' }),
          }),
        )
      : null;
    if (identityProvider) stops.push(stopped('sign-in provider', () => identityProvider.close()));
    // After the worker, which sends the mail, and before the rest.
    stops.push(stopped('mail catcher', () => mailCatcher.close()));

    const { sql, seeded, mailChannel } = await startStep(
      'database',
      (error) => databaseRemedy(error, externalDatabase),
      async () => {
        await migrate(config.database.url);
        const sql = createConfiguredSql(config.database);
        stops.push(() => sql.end({ timeout: 5 }));
        const seeded = await seedDevelopment(sql, config, state);
        const environment = await ensureEnvironment(sql, DEV_ENVIRONMENT);
        const mailChannel = await seedDevMailChannel(
          sql,
          config.encryption,
          environment.id,
          ports.mailSmtp,
        );
        return { sql, seeded, mailChannel };
      },
    );

    // Traces and metrics as `gatehouse api` and `gatehouse worker` have them (README, "Observe
    // it"): one process here, so one tracer and one metrics endpoint for both.
    const { otlpEndpoint, metrics: metricsAt } = config.observability;
    const tracing = startTracing({ endpoint: otlpEndpoint, serviceName: 'gatehouse-dev' });
    if (tracing) stops.push(() => tracing.shutdown());
    const coreMetrics = metricsAt ? `127.0.0.1:${String(await freePort())}` : undefined;

    const workerRemedy = ownTemporal ? REMEDIES.worker : REMEDIES.externalTemporal;
    const worker = await startStep('worker', workerRemedy, async () => {
      // One process hosts API and worker here, so the worker must not take over Ctrl-C.
      installTemporalRuntime(logger, {
        handleSignals: false,
        ...(coreMetrics ? { metricsBindAddress: coreMetrics } : {}),
      });
      const connection = await connectWorker(config.temporal);
      stops.push(() => connection.close());
      return createWorker({ config, sql, logger, connection, tracing });
    });
    const running = worker.run();
    stops.push(
      stopped('worker', async () => {
        worker.shutdown();
        await running;
      }),
    );

    const api = await startStep('API', REMEDIES.api, async () => {
      const temporal = await connectClient(
        config.temporal,
        config.encryption,
        tracing ? { tracer: tracing.tracer } : {},
      );
      stops.push(() => temporal.connection.close());
      await startAuditSealing(temporal, config, logger);
      await resumeAuditDeliveries(temporal, config, sql, logger);
      return startApiServer({ config, sql, temporal, logger }, servers.api);
    });
    stops.push(stopped('API', () => api.close()));

    const metrics = metricsAt
      ? await startStep('metrics endpoint', REMEDIES.metrics, async () => {
          watchHeldCalls(sql);
          return startMetricsServer(metricsAt, async () =>
            (await fetch(`http://${coreMetrics ?? ''}/metrics`)).text(),
          );
        })
      : null;
    if (metrics) stops.push(() => metrics.close());

    if (uiFront && uiInternalUrl) {
      uiFront.serve({
        uiUrl: uiInternalUrl,
        apiUrl: api.url,
        namespace: config.temporal.namespace,
        signInKey: seeded.adminKey,
      });
    }

    return {
      apiUrl: api.url,
      docsUrl: `${api.url}/docs`,
      temporalUiUrl: uiFront?.url() ?? null,
      temporalUiSignInUrl: uiFront?.signInUrl() ?? null,
      temporalAddress: config.temporal.address,
      demoAppUrl: demoApp.url,
      consoleUrl: `${config.api.publicUrl}${CONSOLE_PATH}/${DEV_ENVIRONMENT}`,
      identityProvider: identityProvider && {
        issuer: identityProvider.issuer,
        name: PROVIDER_NAME,
        accounts: identityProvider.accounts,
      },
      mail: {
        url: `http://127.0.0.1:${String(ports.mail)}`,
        smtp: `127.0.0.1:${String(ports.mailSmtp)}`,
        channel: mailChannel,
      },
      databaseUrl: config.database.url,
      externalDatabase,
      replacedPorts: replaced,
      metricsUrl: metrics?.url ?? null,
      tracesEndpoint: tracing ? otlpEndpoint : null,
      postgresPort,
      postgresClusterElsewhere,
      lost,
      ...seeded,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
