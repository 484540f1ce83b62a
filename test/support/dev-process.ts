import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../infra/dev/free-port.js';
import { testEnv } from './stack-env.js';

const bin = fileURLToPath(new URL('../../infra/cli/bin.js', import.meta.url));

export interface DevProcess {
  child: ChildProcessWithoutNullStreams;
  /** Everything it printed so far, stdout and stderr together, as a terminal shows it. */
  output: () => string;
  /** A banner field's first word, e.g. `field('API')` is the API's URL. */
  field: (label: string) => string;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
}

export interface DevProcessOptions {
  dataDir: string;
  env?: Record<string, string>;
  /** A TypeScript entry point run instead of `gatehouse dev` (it must start the stack itself). */
  script?: string;
  /** The `gatehouse` command of another checkout (default: this one's). */
  bin?: string;
  /**
   * In a process group of its own, as a terminal runs it: `interruptGroup` then sends SIGINT
   * to the whole group, as Ctrl-C does.
   */
  detached?: boolean;
}

/**
 * Starts `gatehouse dev` (or a script around it) in its own data folder, with only PATH and HOME
 * from this environment (and the run's workflow bundle cache), so the test's own settings
 * (DATABASE_URL, TEMPORAL_ADDRESS) stay out.
 */
export function spawnDev(options: DevProcessOptions): DevProcess {
  const args = options.script ? ['--import', 'tsx', options.script] : [options.bin ?? bin, 'dev'];
  const child = spawn(process.execPath, args, {
    detached: options.detached ?? false,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GATEHOUSE_DATA_DIR: options.dataDir,
      // The run's bundle, made once by the global set-up, instead of the data folder's own.
      WORKFLOW_BUNDLE_CACHE: testEnv('workflowBundleCache'),
      ...options.env,
    },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const field = (label: string) => {
    const match = new RegExp(`^  ${label}\\s{2,}(\\S+)`, 'm').exec(output);
    if (!match?.[1]) throw new Error(`no "${label}" in:\n${output}`);
    return match[1];
  };
  return { child, output: () => output, field, exited };
}

/** Waits for the banner's last line; fails with the output if it exits first. */
export async function untilReady(dev: DevProcess, timeoutMs = 120_000): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`gatehouse dev not ready:\n${dev.output()}`));
    }, timeoutMs);
    const check = () => {
      if (dev.output().includes('Press Ctrl-C to stop')) {
        clearTimeout(timer);
        dev.child.stdout.off('data', check);
        resolve();
      }
    };
    dev.child.stdout.on('data', check);
    check();
    void dev.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gatehouse dev exited (${String(code)}):\n${dev.output()}`));
    });
  });
}

/** Ctrl-C, as a person stops it; resolves with the exit code. */
export async function stopDev(dev: DevProcess): Promise<number | null> {
  if (dev.child.exitCode === null && dev.child.signalCode === null) dev.child.kill('SIGINT');
  return dev.exited;
}

/**
 * Ctrl-C in its terminal: SIGINT to every process of its group (see `detached`), not to it
 * alone; resolves with the exit code.
 */
export async function interruptGroup(dev: DevProcess): Promise<number | null> {
  if (dev.child.exitCode === null && dev.child.signalCode === null && dev.child.pid) {
    process.kill(-dev.child.pid, 'SIGINT');
  }
  return dev.exited;
}

/** The ports a dev data folder's local state prefers. */
export interface DevStatePorts {
  postgres: number;
  temporal: number;
  temporalUi: number;
  api: number;
  demoApp: number;
  identityProvider: number;
  mailSmtp: number;
  mail: number;
}

/**
 * A data folder for a test's `gatehouse dev`, with the local state a first start writes: fresh
 * secrets, and preferred ports that are free now unless given (`extra` adds fields of older
 * versions). Reachable by the `postgres` user, which the embedded Postgres runs as under root.
 */
export async function devDataFolder(
  prefix: string,
  ports: Partial<DevStatePorts> = {},
  extra: Record<string, unknown> = {},
): Promise<{ dir: string; ports: DevStatePorts }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  return { dir, ports: await writeDevState(dir, ports, extra) };
}

/** Writes the local state of a first start into `dir` (see `devDataFolder`). */
export async function writeDevState(
  dir: string,
  ports: Partial<DevStatePorts> = {},
  extra: Record<string, unknown> = {},
): Promise<DevStatePorts> {
  const chosen: DevStatePorts = {
    postgres: ports.postgres ?? (await freePort()),
    temporal: ports.temporal ?? (await freePort()),
    temporalUi: ports.temporalUi ?? (await freePort()),
    api: ports.api ?? (await freePort()),
    demoApp: ports.demoApp ?? (await freePort()),
    identityProvider: ports.identityProvider ?? (await freePort()),
    mailSmtp: ports.mailSmtp ?? (await freePort()),
    mail: ports.mail ?? (await freePort()),
  };
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'local-state.json'),
    JSON.stringify({
      postgres: { port: chosen.postgres, password: randomBytes(18).toString('base64url') },
      encryptionKey: randomBytes(32).toString('base64'),
      temporal: { port: chosen.temporal, uiPort: chosen.temporalUi },
      api: { port: chosen.api },
      demoApp: {
        port: chosen.demoApp,
        clientId: 'gatehouse-dev',
        clientSecret: randomBytes(24).toString('base64url'),
      },
      identityProvider: {
        port: chosen.identityProvider,
        clientId: 'gatehouse-dev-console',
        clientSecret: randomBytes(24).toString('base64url'),
      },
      mailCatcher: { smtpPort: chosen.mailSmtp, webPort: chosen.mail },
      ...extra,
    }),
    { mode: 0o600 },
  );
  return chosen;
}
