import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';
import { bundleWorkflows } from './bundle.js';

export interface WorkerDeps {
  config: Config;
  sql: Sql;
  logger: Logger;
  connection: NativeConnection;
  /** A pre-built bundle (tests build one per run); otherwise the sources are bundled now. */
  workflowBundle?: WorkflowBundleOption;
  taskQueue?: string;
}

/** One task queue carries every Gatehouse workflow and activity. */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.taskQueue ?? deps.config.temporal.taskQueue,
    workflowBundle: deps.workflowBundle ?? (await bundleWorkflows()),
    activities: createActivities({ sql: deps.sql, config: deps.config, logger: deps.logger }),
  });
}
