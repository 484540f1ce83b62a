// Proves a freshly installed temporal-test-server starts on this machine (right architecture,
// libc, permissions) before its install is stamped as good.
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The test server has no --version (its only argument is the port), so it is started on a free
 * port until it accepts a connection; that takes tens of milliseconds.
 */
export async function probeTestServer(executable: string): Promise<string> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn(executable, [String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let ended: string | undefined;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const closed = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      ended = `exited (${String(signal ?? code)})`;
      resolve();
    });
    child.once('error', (err) => {
      ended = err.message;
      resolve();
    });
  });
  try {
    while (!(await accepts(port))) {
      if (ended !== undefined) throw new Error(`it ${ended} before listening: ${stderr.trim()}`);
      if (Date.now() - started > 15_000) throw new Error(`not listening on ${String(port)} in 15s`);
      await sleep(25);
    }
    const ms = Date.now() - started;
    return `listened on port ${String(port)} after ${String(ms)} ms`;
  } finally {
    if (ended === undefined) child.kill('SIGKILL');
    await closed;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  if (address === null || typeof address === 'string') throw new Error('no TCP port was assigned');
  return address.port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', () => {
      resolve(false);
    });
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
  });
}
