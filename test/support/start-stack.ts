import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../infra/dev/embedded-postgres.js';
import { freePort } from '../../infra/dev/free-port.js';
import { startOnFreePorts } from '../../infra/dev/port-retry.js';
import { startTemporalDevServer } from '../../infra/dev/temporal-dev-server.js';
import { resolveTemporalCli } from '../../infra/tools/temporal-binaries.js';
import { bundleWorkflows } from '../../worker/bundle.js';
import { createTemplateDatabase, dropTemplateDatabase } from './template-database.js';
import { TEST_ENV, type TestStack } from './stack-env.js';
import { TEST_LOG } from './test-log.js';

declare global {
  var gatehouseTestStack: TestStack | undefined;
}

/**
 * One real Postgres and one real Temporal dev server for the whole run (each test file then
 * makes its own database and task queue), plus the workflow bundle built once. What the test
 * files need is passed to them through environment variables, which jest's workers inherit.
 */
export async function startStack(): Promise<void> {
  // The run's log starts empty: what it holds is this run's (README, "Test it").
  await mkdir(path.dirname(TEST_LOG), { recursive: true });
  await writeFile(TEST_LOG, '');
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-test-'));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its data folder.
  await chmod(dir, 0o755);
  const stops: (() => Promise<void>)[] = [];

  // Postgres and Temporal must be told their ports: each starts on a free one and, when another
  // program took it before the server could listen, on another (infra/dev/port-retry.ts).
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const password = randomBytes(12).toString('hex');
    const { started: pg } = await startOnFreePorts({ port: await freePort() }, ({ port }) =>
      startEmbeddedPostgres({
        directory: path.join(dir, 'postgres'),
        port,
        password,
        durable: false,
      }),
    );
    stops.push(() => pg.stop());
    adminUrl = pg.url('postgres');
  }

  // Every test file's database is a copy of this one, migrated once for the run: copying a
  // template is a file copy, where migrating each database anew took about a second (more on a
  // loaded machine) for each of the suite's files.
  const template = `gatehouse_template_${randomBytes(6).toString('hex')}`;
  await createTemplateDatabase(adminUrl, template);
  stops.push(() => dropTemplateDatabase(adminUrl, template));

  // Bundled into the cache that the `gatehouse worker` and `gatehouse dev` processes the tests
  // start are given (WORKFLOW_BUNDLE_CACHE): they find it there instead of each bundling anew.
  const bundleCache = path.join(dir, 'workflow-bundles');
  const [{ started: temporal }, bundle] = await Promise.all([
    resolveTemporalCli().then(async (cli) =>
      startOnFreePorts({ port: await freePort() }, ({ port }) =>
        startTemporalDevServer({ cli, port, uiPort: null, namespace: 'default' }),
      ),
    ),
    bundleWorkflows({ tracing: false, cacheDir: bundleCache }),
  ]);
  stops.push(() => temporal.stop());
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle.code);

  process.env[TEST_ENV.adminDatabaseUrl] = adminUrl;
  process.env[TEST_ENV.templateDatabase] = template;
  process.env[TEST_ENV.temporalAddress] = temporal.address;
  process.env[TEST_ENV.workflowBundle] = bundlePath;
  process.env[TEST_ENV.workflowBundleCache] = bundleCache;
  process.env[TEST_ENV.dir] = dir;
  globalThis.gatehouseTestStack = { stops };
}
