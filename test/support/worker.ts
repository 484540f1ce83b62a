import type { DataConverter } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { createLogger } from '../../infra/logger.js';
import { createWorker, type GatehouseWorker } from '../../worker/worker.js';
import { testEnv } from './stack-env.js';

export interface TestWorker {
  worker: GatehouseWorker;
  stop(): Promise<void>;
}

/** Keeps the SDK's own info lines out of test output; the runtime exists once per process. */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [] });
  } catch {
    // Installed by an earlier test file in this jest worker process.
  }
}

/**
 * The real worker on the test file's own task queue, with the bundle built by the global set-up.
 * `dataConverter` replaces the payload codec, e.g. `{}` for a worker from before encryption.
 */
export async function startTestWorker(
  config: Config,
  sql: Sql,
  options: { dataConverter?: DataConverter } = {},
): Promise<TestWorker> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createWorker({
    config,
    sql,
    logger: createLogger({ level: 'warn' }),
    connection,
    workflowBundle: { codePath: testEnv('workflowBundle') },
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
  });
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
