import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Config } from '../../infra/config.js';
import { resolveTemporalCli } from '../../infra/tools/temporal-binaries.js';
import { testEnv } from '../support/stack-env.js';
import { installTestRuntime } from '../support/test-log.js';
import { eventually } from '../support/eventually.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

/** A backend on Temporal: its own namespace, worker and client, and a Nexus endpoint to Gatehouse. */
export interface CallerStack {
  namespace: string;
  taskQueue: string;
  endpoint: string;
  /** A client of the caller's namespace, without Gatehouse's codec (the caller has none). */
  client: Client;
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

/** `temporal …` against the test server, as README's operator commands read. */
async function temporalCli(address: string, args: string[]): Promise<string> {
  const cli = await resolveTemporalCli();
  const { stdout } = await run(cli, [...args, '--address', address]);
  return stdout;
}

/** A namespace is usable a moment after it is created: wait until the server knows it. */
async function createNamespace(connection: Connection, namespace: string): Promise<void> {
  await temporalCli(connection.options.address, [
    'operator',
    'namespace',
    'create',
    '--namespace',
    namespace,
  ]);
  await eventually(`namespace ${namespace} known to the server`, () =>
    connection.workflowService.describeNamespace({ namespace }).then(
      () => true,
      () => null,
    ),
  );
}

/** The caller's workflows with the key compiled in (./caller-interceptors.ts). */
async function bundleCaller(key: string, dir: string): Promise<WorkflowBundleWithSourceMap> {
  const keyModule = path.join(dir, `caller-key-${randomBytes(4).toString('hex')}.js`);
  await writeFile(keyModule, `export const gatehouseApiKey = ${JSON.stringify(key)};\n`);
  return bundleWorkflowCode({
    workflowsPath: path.join(here, 'caller-workflows.ts'),
    workflowInterceptorModules: [path.join(here, 'caller-interceptors.ts')],
    webpackConfigHook: (config) => ({
      ...config,
      resolve: {
        ...config.resolve,
        extensionAlias: { '.js': ['.ts', '.js'] },
        // The SDK's own aliases (its payload converter, …) stay.
        alias: {
          ...(config.resolve?.alias as object | undefined),
          'gatehouse-caller-key': keyModule,
        },
      },
    }),
    logger: new DefaultLogger('WARN'),
  });
}

/**
 * A second namespace on the test server with a worker of the caller's workflows, and a Nexus
 * endpoint (made with the CLI command README gives operators) that targets Gatehouse's namespace
 * and task queue. `dir`: where the key module is written, the test run's folder by default; the
 * benchmark (infra/bench/approval-ways.ts) passes its own and installs its own Temporal runtime.
 */
export async function startCallerStack(
  gatehouse: Pick<Config, 'temporal'>,
  key: string,
  options: { dir?: string } = {},
): Promise<CallerStack> {
  if (options.dir === undefined) installTestRuntime();
  const dir = options.dir ?? testEnv('dir');
  const { address } = gatehouse.temporal;
  const suffix = randomBytes(4).toString('hex');
  const namespace = `backend-${suffix}`;
  const taskQueue = `backend-${suffix}`;
  const endpoint = `gatehouse-${suffix}`;
  const connection = await Connection.connect({ address });
  await createNamespace(connection, namespace);
  await temporalCli(address, [
    'operator',
    'nexus',
    'endpoint',
    'create',
    '--name',
    endpoint,
    '--target-namespace',
    gatehouse.temporal.namespace,
    '--target-task-queue',
    gatehouse.temporal.taskQueue,
  ]);
  const bundle = await bundleCaller(key, dir);
  const workerConnection = await NativeConnection.connect({ address });

  async function startWorker() {
    const worker = await Worker.create({
      connection: workerConnection,
      namespace,
      taskQueue,
      workflowBundle: { code: bundle.code },
    });
    const running = worker.run();
    return async () => {
      worker.shutdown();
      await running;
    };
  }

  let stopWorker = await startWorker();
  return {
    namespace,
    taskQueue,
    endpoint,
    client: new Client({ connection, namespace }),
    async restartWorker() {
      await stopWorker();
      stopWorker = await startWorker();
    },
    async stop() {
      await stopWorker();
      await temporalCli(address, ['operator', 'nexus', 'endpoint', 'delete', '--name', endpoint]);
      await workerConnection.close();
      await connection.close();
    },
  };
}
