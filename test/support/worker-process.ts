import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../infra/config.js';
import { serviceEnv } from './service-process.js';

const cli = fileURLToPath(new URL('../../infra/cli/bin.js', import.meta.url));

export interface WorkerProcess {
  /** SIGKILL: the process dies mid-work, with no chance to finish or report anything. */
  kill(): Promise<void>;
}

/**
 * `gatehouse worker` as a process of its own, as in production, so that a test can kill it the
 * hard way. Resolves once the worker says it is running.
 */
export async function startWorkerProcess(config: Config): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [cli, 'worker'], {
    env: { ...process.env, ...serviceEnv(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`gatehouse worker did not start:\n${output.slice(-2000)}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('"msg":"worker running"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`gatehouse worker exited:\n${output.slice(-2000)}`));
    });
  });
  return {
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
