import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';
import type { Tracing } from '../infra/telemetry/tracing.js';
import { encryptedDataConverter } from '../infra/temporal/payload-codec.js';
import { refreshTaskQueue } from '../workflows/connection-types.js';
import { bundleWorkflows } from './bundle.js';
import { gatehouseServiceHandler } from './nexus/gatehouse-handler.js';
import { workerTracingOptions } from './tracing-options.js';

export interface WorkerDeps {
  config: Config;
  sql: Sql;
  logger: Logger;
  connection: NativeConnection;
  /** A pre-built bundle (tests build one per run); otherwise the sources are bundled now. */
  workflowBundle?: WorkflowBundleOption;
  /**
   * Only for tests of the upgrade to encrypted payloads: a worker as it ran before the codec.
   * Everything else gets the codec over `config.encryption`.
   */
  dataConverter?: DataConverter;
  /** Tracing, when on (infra/telemetry/tracing.ts). */
  tracing?: Tracing | null;
}

/** The worker process's Temporal workers, run and stopped together. */
export interface GatehouseWorker {
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * Two workers on one connection. The main task queue carries calls, connections and webhooks.
 * Token refreshes have a queue of their own: a call's upstream activity waits for the
 * `refresh/<id>` workflow, and were that workflow behind the same slots, a storm of waiting
 * calls could hold every slot the refresh needs to run.
 */
export async function createWorker(deps: WorkerDeps): Promise<GatehouseWorker> {
  const { config } = deps;
  const workflowBundle =
    deps.workflowBundle ??
    (await bundleWorkflows({
      tracing: Boolean(deps.tracing),
      cacheDir: config.worker.bundleCache,
    }));
  // Call inputs, app answers and headers are sealed before they reach Temporal.
  const dataConverter = deps.dataConverter ?? encryptedDataConverter(config.encryption);
  const activities = createActivities({
    sql: deps.sql,
    config,
    logger: deps.logger,
    // The worker's own connection also serves the client its activities use.
    temporal: new Client({
      connection: deps.connection,
      namespace: config.temporal.namespace,
      dataConverter,
      ...(deps.tracing
        ? {
            interceptors: {
              workflow: [
                new OpenTelemetryWorkflowClientInterceptor({ tracer: deps.tracing.tracer }),
              ],
            },
          }
        : {}),
    }),
  });
  const common = {
    connection: deps.connection,
    namespace: config.temporal.namespace,
    workflowBundle,
    activities,
    dataConverter,
    // Bounded whatever the heap: the SDK's default grows with the heap limit (~2,300
    // workflows at Node's 4 GiB), and a held call would stay cached for as long as it waits. An
    // evicted call replays its few events when its decision or expiry comes.
    maxCachedWorkflows: config.worker.maxCachedWorkflows,
    ...workerTracingOptions(deps.tracing ?? null),
  };
  const workers = await Promise.all([
    Worker.create({
      ...common,
      taskQueue: config.temporal.taskQueue,
      // Reads call the app in a local activity, which keeps its workflow task (and slot) open
      // for the length of the call: room for many calls in flight at once.
      maxConcurrentWorkflowTaskExecutions: 200,
      maxConcurrentLocalActivityExecutions: 200,
      maxConcurrentActivityTaskExecutions: 200,
      // The `gatehouse` Nexus service, beside the workflows it starts: a Nexus
      // endpoint targets this namespace and task queue.
      nexusServices: [gatehouseServiceHandler({ sql: deps.sql })],
    }),
    Worker.create({ ...common, taskQueue: refreshTaskQueue(config.temporal.taskQueue) }),
  ]);
  return {
    async run() {
      await Promise.all(workers.map((worker) => worker.run()));
    },
    shutdown() {
      for (const worker of workers) worker.shutdown();
    },
  };
}
