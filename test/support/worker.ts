import type { DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../../infra/config.js';
import type { Logger } from '../../infra/logger.js';
import type { Sql } from '../../infra/database/client.js';
import { createWorker, type GatehouseWorker } from '../../worker/worker.js';
import { testEnv } from './stack-env.js';
import { installTestRuntime, testLogger } from './test-log.js';

export interface TestWorker {
  worker: GatehouseWorker;
  stop(): Promise<void>;
}

/**
 * The real worker on the test file's own task queue, with the bundle built by the global set-up.
 * `dataConverter` replaces the payload codec, e.g. `{}` for a worker from before encryption.
 */
export async function startTestWorker(
  config: Config,
  sql: Sql,
  options: { dataConverter?: DataConverter; logger?: Logger } = {},
): Promise<TestWorker> {
  installTestRuntime();
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  let worker: GatehouseWorker;
  try {
    worker = await createWorker({
      config,
      sql,
      // Its warnings (retried activities, refused webhooks) are the run's log, not test output,
      // unless the test reads them itself.
      logger: options.logger ?? testLogger('warn'),
      connection,
      workflowBundle: { codePath: testEnv('workflowBundle') },
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    });
  } catch (error) {
    // A worker that failed to start leaves no connection open behind its error.
    await connection.close();
    throw error;
  }
  const running = worker.run();
  let stopped: Promise<void> | null = null;
  return {
    worker,
    // Idempotent: a test may stop the worker itself before its stack stops everything.
    stop() {
      stopped ??= (async () => {
        worker.shutdown();
        await running;
        await connection.close();
      })();
      return stopped;
    },
  };
}
