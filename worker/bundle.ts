import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

const require = createRequire(import.meta.url);

/** OpenTelemetry's workflow interceptors: a span per workflow run, Update and scheduled activity. */
const tracingInterceptors =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/**
 * Bundles the workflow sources for the worker's sandbox. Our imports name `.js` files (ESM
 * TypeScript convention) that exist as `.ts`, so webpack is told to try both.
 *
 * The tracing interceptors only when tracing is on: in the sandbox they make spans for every
 * workflow task, Update and activity whether or not anything exports them, which doubled the
 * worker's CPU per call (README, "Performance"). They add headers and sink calls, never
 * commands, so a history made with them replays without them and the other way round.
 *
 * With `cacheDir`, a bundle made before is reused while every file webpack read for it is
 * unchanged (see `readCached`), so a restart skips the bundling: seconds of CPU, more on a busy
 * machine. Any trouble with the cache only means bundling as without one.
 */
export async function bundleWorkflows(
  options: { tracing: boolean; cacheDir?: string | null } = { tracing: false },
): Promise<WorkflowBundleWithSourceMap> {
  const interceptors = options.tracing ? [tracingInterceptors] : [];
  const entry = options.cacheDir
    ? path.join(options.cacheDir, `${await bundleKey(interceptors)}.json`)
    : null;
  if (entry) {
    const cached = await readCached(entry).catch(() => null);
    if (cached !== null) return { code: cached, sourceMap: '' };
  }
  let inputs: string[] = [];
  const startedAt = Date.now();
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: interceptors,
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
      plugins: [
        ...(config.plugins ?? []),
        {
          // Every file webpack read, and every path it looked for and did not find (a file
          // added there would change what an import resolves to): what a cached copy hangs on.
          apply(compiler: {
            hooks: { done: { tap(name: string, hook: (stats: BuildStats) => void): void } };
          }) {
            compiler.hooks.done.tap('gatehouse-bundle-inputs', ({ compilation }) => {
              inputs = [...compilation.fileDependencies, ...compilation.missingDependencies];
            });
          },
        },
      ],
    }),
    logger: new DefaultLogger('WARN'),
  });
  if (entry) await writeCached(entry, bundle.code, inputs, startedAt).catch(() => undefined);
  return bundle;
}

interface BuildStats {
  compilation: { fileDependencies: Iterable<string>; missingDependencies: Iterable<string> };
}

/** A cached bundle: its code and, for each input path, what was there when it was made. */
interface CachedBundle {
  inputs: Record<string, string>;
  code: string;
}

/**
 * Names the cache entry: what shapes a bundle besides the files webpack reads (the interceptors
 * it is told to include, and the bundler, webpack and the TypeScript loader themselves, whose
 * versions their manifests carry).
 */
async function bundleKey(interceptors: string[]): Promise<string> {
  const hash = createHash('sha256').update(JSON.stringify({ workflowsPath, interceptors }));
  const worker = require.resolve('@temporalio/worker/package.json');
  const fromWorker = createRequire(worker);
  for (const manifest of [
    worker,
    fromWorker.resolve('webpack/package.json'),
    fromWorker.resolve('swc-loader/package.json'),
    fromWorker.resolve('@swc/core/package.json'),
  ]) {
    hash.update(await readFile(manifest));
  }
  return `workflows-${hash.digest('hex').slice(0, 32)}`;
}

/**
 * What is at `file` now: its content's hash, `dir`, or `none`. With `changedSince`, a file
 * modified since then is an error: webpack may have read it before the change.
 */
async function fingerprint(file: string, changedSince?: number): Promise<string> {
  const found = await stat(file).catch(() => null);
  if (found === null) return 'none';
  // A directory counts only as being there: its modification time moves whenever anything is
  // made in it (a checkout under /tmp had /tmp among the inputs, which every process touches).
  if (found.isDirectory()) return 'dir';
  if (changedSince !== undefined && found.mtimeMs >= changedSince) {
    throw new Error(`${file} changed while the workflows were bundled`);
  }
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/** The cached bundle's code when every input is as it was when it was made; else null. */
async function readCached(entry: string): Promise<string | null> {
  const cached = JSON.parse(await readFile(entry, 'utf8')) as CachedBundle;
  const inputs = Object.entries(cached.inputs);
  // A bundle always reads the workflows' own entry point: an entry without it is not one.
  if (typeof cached.code !== 'string' || cached.inputs[workflowsPath] === undefined) return null;
  const now = await Promise.all(inputs.map(([file]) => fingerprint(file)));
  return inputs.every(([, was], i) => now[i] === was) ? cached.code : null;
}

/**
 * Written to a scratch file renamed into place: a reader sees a whole entry or the old one. Not
 * written when an input changed during the bundling (the code may hold its old content).
 */
async function writeCached(
  entry: string,
  code: string,
  inputs: string[],
  startedAt: number,
): Promise<void> {
  const files = [...new Set(inputs)].filter((file) => path.isAbsolute(file));
  // A second's margin for file systems whose modification times are coarse.
  const fingerprints = await Promise.all(files.map((file) => fingerprint(file, startedAt - 1000)));
  const cached: CachedBundle = {
    inputs: Object.fromEntries(files.map((file, i) => [file, fingerprints[i] ?? 'none'])),
    code,
  };
  await mkdir(path.dirname(entry), { recursive: true, mode: 0o700 });
  const scratch = `${entry}.${String(process.pid)}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(scratch, JSON.stringify(cached), { mode: 0o600 });
    await rename(scratch, entry);
  } finally {
    await rm(scratch, { force: true });
  }
}
