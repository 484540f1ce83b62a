// Large third-party material that only the tests and benchmarks use (GitHub's OpenAPI
// descriptions, a corpus of public API descriptions, the Prism mock server), kept once per machine
// rather than in the checkout. In `.tools/`, as the Temporal binaries are, every fresh clone (each
// CI run) would download and unpack it again, and each of two CI runs at once would hold its own
// copy; in one folder per machine, outside any checkout, each version is fetched once and shared.
// It is the folder test/support/tools-cache.ts names for the tests' own programs (the conformance
// runner's Node 22, the MCP Inspector), so one variable moves, and one folder clears, them all.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { isAlive } from './pip-binary.js';

const run = promisify(execFile);

/** Written last, after the content was checked: a folder without it is never trusted. */
const STAMP = '.verified';
/** Lines of a failed program's stderr shown in its error, stack frames left out. */
const STDERR_LINES = 14;
/** How often a process waiting for another's install looks again; the install takes seconds. */
const LOCK_POLL_MS = 500;
/** A lock file without a readable pid this old was left by a process killed while writing it. */
const UNREADABLE_LOCK_STALE_MS = 60_000;

/** `GATEHOUSE_TEST_TOOLS`, else `$XDG_CACHE_HOME/gatehouse/test-tools` (`~/.cache/…`). */
export function machineToolsDir(): string {
  const chosen = process.env['GATEHOUSE_TEST_TOOLS'];
  if (chosen) return path.resolve(chosen);
  const cache = process.env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache');
  return path.join(cache, 'gatehouse', 'test-tools');
}

export interface CachedInstall {
  /** The folder's name in the cache, naming the exact version: `octokit-openapi-23.0.2`. */
  name: string;
  /** What it is, for messages: `GitHub's OpenAPI descriptions (@octokit/openapi@23.0.2)`. */
  what: string;
  /** Fills the empty folder `into`, checks what it put there and returns a line for the stamp. */
  build: (into: string) => Promise<string>;
}

export interface Cached {
  dir: string;
  /** Whether this call installed it (rather than finding it, or another process installing it). */
  installed: boolean;
}

// Per process, so concurrent callers (test files' hooks, the CLI's parallel fetches) share one.
const pending = new Map<string, Promise<Cached>>();

/**
 * The verified folder `install.name` in the machine's cache, built when missing: in a scratch
 * folder beside it, renamed into place only once complete and checked, so a killed run leaves
 * only a `.tmp-*` folder no lookup accepts, and concurrent runs never see half a copy. A lock
 * file makes a second process wait for the first's install instead of downloading it again.
 */
export function ensureCached(install: CachedInstall): Promise<Cached> {
  const dir = path.join(machineToolsDir(), install.name);
  let promise = pending.get(dir);
  if (promise === undefined) {
    promise = findOrInstall(dir, install);
    // A failure is not kept: the caller may fix the machine and ask again.
    void promise.catch(() => pending.delete(dir));
    pending.set(dir, promise);
  }
  return promise;
}

async function findOrInstall(dir: string, install: CachedInstall): Promise<Cached> {
  if (await exists(path.join(dir, STAMP))) return { dir, installed: false };
  const tools = path.dirname(dir);
  try {
    await mkdir(tools, { recursive: true });
    const lock = path.join(tools, `.lock-${install.name}`);
    for (;;) {
      if (await tryLock(lock)) break;
      if (await exists(path.join(dir, STAMP))) return { dir, installed: false };
      await delay(LOCK_POLL_MS);
    }
    try {
      // Another process may have finished between our look and our lock.
      if (await exists(path.join(dir, STAMP))) return { dir, installed: false };
      const started = performance.now();
      await installInto(dir, install);
      // Once per machine and version, and it is hundreds of MB: worth a line.
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stderr.write(`fetched ${install.what} into ${dir} in ${seconds} s\n`);
      return { dir, installed: true };
    } finally {
      await rm(lock, { force: true });
    }
  } catch (err) {
    throw new Error(
      [
        `Could not fetch ${install.what} into ${dir}:`,
        ...(err instanceof Error ? err.message : String(err)).split('\n').map((l) => `  | ${l}`),
        `Fix what the lines above say (fetching needs the npm registry), then run ` +
          `\`npm run tools -- --openapi\`; or copy ${install.name}/ from a machine that has it ` +
          `into ${tools} (GATEHOUSE_TEST_TOOLS names another folder).`,
      ].join('\n'),
      { cause: err },
    );
  }
}

/** Takes the lock, or says another live process holds it; a dead holder's lock is removed. */
async function tryLock(lock: string): Promise<boolean> {
  try {
    await writeFile(lock, `${String(process.pid)}\n`, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EEXIST') throw err;
  }
  const text = await readFile(lock, 'utf8').catch(() => undefined);
  if (text === undefined) return false; // Released meanwhile: the next round takes it.
  const holder = Number(text.trim());
  const stale =
    Number.isInteger(holder) && holder > 0
      ? !isAlive(holder)
      : Date.now() - ((await stat(lock).catch(() => undefined))?.mtimeMs ?? Date.now()) >
        UNREADABLE_LOCK_STALE_MS;
  if (stale) await rm(lock, { force: true });
  return false;
}

async function installInto(dir: string, install: CachedInstall): Promise<void> {
  const tools = path.dirname(dir);
  const prefix = `.tmp-${install.name}-`;
  // A killed install leaves its scratch folder (up to hundreds of MB); a live one is left alone.
  for (const entry of await readdir(tools)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    await rm(path.join(tools, entry), { recursive: true, force: true });
  }
  const tmp = path.join(tools, `${prefix}${String(process.pid)}-${randomBytes(4).toString('hex')}`);
  await mkdir(tmp);
  try {
    const checked = await install.build(tmp);
    await writeFile(path.join(tmp, STAMP), `${checked.trim()}\n`);
    // Another process finished the same install first (the lock is a saving, not a guarantee):
    // its copy is as good as ours, and someone may be reading it.
    if (await exists(path.join(dir, STAMP))) return;
    // A folder without the stamp is an install that never finished.
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The `sha512-…` integrity string of a file, as npm's `dist.integrity` writes it. */
export async function sha512Integrity(file: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

/**
 * Downloads `name@version`'s tarball into `into` with npm's own client (its registry, proxy and
 * cache settings), checks it against the pinned `dist.integrity`, unpacks the `members` given
 * (paths inside the tarball, `package/…`) into `into` without their `package/`, and deletes the
 * tarball.
 */
export async function unpackNpmTarball(
  spec: { name: string; version: string; integrity: string; members: string[] },
  into: string,
): Promise<void> {
  const { stdout } = await runTool(
    'npm',
    [
      'pack',
      `${spec.name}@${spec.version}`,
      '--json',
      '--pack-destination',
      into,
      '--loglevel=error',
    ],
    { cwd: into },
  );
  const [packed] = JSON.parse(stdout) as { filename?: string }[];
  if (!packed?.filename) throw new Error(`npm pack named no tarball: ${stdout.slice(0, 500)}`);
  const tarball = path.join(into, packed.filename);
  const integrity = await sha512Integrity(tarball);
  if (integrity !== spec.integrity) {
    throw new Error(
      `${spec.name}@${spec.version}'s tarball has integrity ${integrity}, not the pinned ` +
        `${spec.integrity}: the registry served other bytes than those this project checked.`,
    );
  }
  // npm tarballs hold everything under `package/`; the folder keeps what is under it.
  await runTool('tar', ['-xzf', tarball, '-C', into, '--strip-components=1', ...spec.members], {
    cwd: into,
  });
  await rm(tarball);
}

/** Runs a program; a failure says how it ended and the end of its stderr. */
export async function runTool(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, args, {
      ...options,
      timeout: 15 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const failure = (typeof err === 'object' && err !== null ? err : {}) as {
      code?: number | string;
      signal?: string | null;
      stderr?: string;
    };
    if (failure.code === 'ENOENT') throw new Error(`${file} is not on PATH`, { cause: err });
    const how =
      typeof failure.code === 'number'
        ? `exited with code ${String(failure.code)}`
        : `was stopped (${failure.signal ?? failure.code ?? 'unknown error'})`;
    // npm says what went wrong first and where its log is last, with a stack trace between.
    const lines = (failure.stderr ?? '')
      .trim()
      .split('\n')
      .filter((line) => !/\s{2,}at \S/.test(line));
    const shown =
      lines.length <= STDERR_LINES
        ? lines
        : [...lines.slice(0, STDERR_LINES - 4), '…', ...lines.slice(-3)];
    throw new Error([`${file} ${args.join(' ')} ${how}; its stderr says:`, ...shown].join('\n'), {
      cause: err,
    });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
