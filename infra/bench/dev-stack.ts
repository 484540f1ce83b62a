import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { walkConnectLink } from '../demo-app/scripted-connect.js';

const cli = fileURLToPath(new URL('../cli/bin.js', import.meta.url));

/** `gatehouse dev` as a user runs it, for `npm run bench -- --stack dev`. */
export interface DevStackUnderTest {
  apiUrl: string;
  /** The banner's agent key (standard, agent `demo-agent`). */
  agentKey: string;
  /** A user of the demo app connected through the hosted connect flow. */
  user: string;
  stop(): Promise<void>;
}

/**
 * Starts the real `gatehouse dev` command, unchanged, in a throwaway data folder (so a first
 * start: fresh Postgres cluster and Temporal SQLite file), reads its banner and connects one user
 * of the demo app as the README's quick start does. `env` adds variables to its environment
 * (LOG_LEVEL, TEMPORAL_ADDRESS, …), for comparing one setting at a time.
 */
export async function startDevStackProcess(
  env: Record<string, string> = {},
): Promise<DevStackUnderTest> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bench-dev-'));
  // The embedded Postgres runs as the `postgres` user under root: it must reach the folder.
  await chmod(dataDir, 0o755);
  const child = spawn(process.execPath, [cli, 'dev'], {
    // Only PATH and HOME from here, as a user's terminal would: the bench's own settings stay out.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GATEHOUSE_DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`gatehouse dev not ready after 180 s:\n${output}`));
      }, 180_000);
      const check = () => {
        if (!output.includes('Press Ctrl-C to stop')) return;
        clearTimeout(timer);
        resolve();
      };
      child.stdout.on('data', check);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`gatehouse dev exited before it was ready:\n${output}`));
      });
    });
    const field = (label: string) => {
      const value = new RegExp(`^  ${label}\\s{2,}(\\S+)`, 'm').exec(output)?.[1];
      if (!value) throw new Error(`no "${label}" in the banner:\n${output}`);
      return value;
    };
    const apiUrl = field('API');
    const agentKey = field('Agent key');
    const user = 'u_bench_dev';
    const link = await fetch(`${apiUrl}/v1/connect/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user, app: 'acme' }),
    });
    const { url } = (await link.json()) as { url: string };
    await walkConnectLink(url, { username: user });
    return { apiUrl, agentKey, user, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
