import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const cli = fileURLToPath(new URL('../cli/bin.js', import.meta.url));

export interface ChildService {
  stop(): Promise<void>;
}

/**
 * `gatehouse api` or `gatehouse worker` as its own process, as in production: on a machine with
 * several cores the API, the worker and the load generator must not share one event loop.
 */
export function startService(
  command: 'api' | 'worker',
  env: Record<string, string>,
  nodeFlags: string[] = [],
): ChildService {
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, cli, command], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code);
    }),
  );
  return {
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(killer);
      if (code !== 0 && errors) {
        process.stderr.write(`gatehouse ${command} exited ${String(code)}:\n${errors}\n`);
      }
    },
  };
}

/** Waits until the API answers `/readyz` (Postgres and Temporal reachable). */
export async function untilReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`the API at ${url} did not become ready`);
    await sleep(200);
  }
}
