import { startApiServer } from '../../api/server.js';
import { resumeAuditDeliveries } from '../../worker/audit-deliveries.js';
import { startAuditSealing } from '../../worker/audit-seal-schedule.js';
import { createWorker } from '../../worker/worker.js';
import { loadConfig } from '../config.js';
import { createConfiguredSql } from '../database/client.js';
import { migrate } from '../database/migrate.js';
import { createLogger } from '../logger.js';
import { freePort } from '../dev/free-port.js';
import { watchHeldCalls } from '../telemetry/held-calls.js';
import { startMetricsServer } from '../telemetry/metrics-server.js';
import { startTracing } from '../telemetry/tracing.js';
import { connectClient, connectWorker } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { untilShutdownSignal } from './signals.js';

/** `gatehouse api`: the stateless HTTP process; run as many as the load needs. */
export async function runApi(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'gatehouse-api' });
  await migrate(config.database.url);
  const sql = createConfiguredSql(config.database);
  const tracing = startTracing({
    endpoint: config.observability.otlpEndpoint,
    serviceName: 'gatehouse-api',
  });
  const temporal = await connectClient(
    config.temporal,
    config.encryption,
    tracing ? { tracer: tracing.tracer } : {},
  );
  const api = await startApiServer({ config, sql, temporal, logger });
  const metricsAt = config.observability.metrics;
  if (metricsAt) watchHeldCalls(sql);
  const metrics = metricsAt ? await startMetricsServer(metricsAt) : null;
  logger.info(
    { url: api.url, tracing: tracing !== null, metrics: metrics?.url ?? null },
    'api listening',
  );
  await untilShutdownSignal();
  logger.info('api shutting down');
  await api.close();
  await metrics?.close();
  await temporal.connection.close();
  await sql.end({ timeout: 5 });
  await tracing?.shutdown();
}

/** `gatehouse worker`: runs workflows and activities; Temporal's runtime drains it on SIGINT/SIGTERM. */
export async function runWorker(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, name: 'gatehouse-worker' });
  await migrate(config.database.url);
  const sql = createConfiguredSql(config.database);
  const metricsAt = config.observability.metrics;
  // The core serves its metrics on a loopback port of its own; the worker's endpoint adds them
  // to Gatehouse's, so one scrape target per process has both.
  const coreMetrics = metricsAt ? `127.0.0.1:${String(await freePort())}` : undefined;
  installTemporalRuntime(logger, {
    handleSignals: true,
    ...(coreMetrics ? { metricsBindAddress: coreMetrics } : {}),
  });
  const tracing = startTracing({
    endpoint: config.observability.otlpEndpoint,
    serviceName: 'gatehouse-worker',
  });
  const connection = await connectWorker(config.temporal);
  const worker = await createWorker({ config, sql, logger, connection, tracing });
  const temporal = await connectClient(config.temporal, config.encryption);
  await startAuditSealing(temporal, config, logger);
  await resumeAuditDeliveries(temporal, config, sql, logger);
  await temporal.connection.close();
  const metrics = metricsAt
    ? await startMetricsServer(metricsAt, async () =>
        (await fetch(`http://${coreMetrics ?? ''}/metrics`)).text(),
      )
    : null;
  logger.info(
    {
      taskQueue: config.temporal.taskQueue,
      tracing: tracing !== null,
      metrics: metrics?.url ?? null,
    },
    'worker running',
  );
  await worker.run();
  await metrics?.close();
  await connection.close();
  await sql.end({ timeout: 5 });
  await tracing?.shutdown();
  logger.info('worker stopped');
}

/** `gatehouse migrate`: brings the schema up to date, for deploy pipelines. */
export async function runMigrate(): Promise<string> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required for `gatehouse migrate`');
  const result = await migrate(url);
  return result.applied.length
    ? `applied ${result.applied.join(', ')}; schema version ${result.version}`
    : `schema already at version ${result.version}`;
}
