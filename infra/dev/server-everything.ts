import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort } from './free-port.js';

const require = createRequire(import.meta.url);
/** The package's launcher: `node dist/index.js streamableHttp` serves MCP at `/mcp` on PORT. */
const launcher = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

export interface McpServerProcess {
  /** The Streamable HTTP endpoint, on loopback. */
  url: string;
  pid: number;
  /** The last few kilobytes the server wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

class PortTaken extends Error {}

async function startOnce(): Promise<McpServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [launcher, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let exited = false;
  const ended = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-16_000);
      if (tail.includes('listening on port')) resolve();
      if (tail.includes('already in use')) reject(new PortTaken(tail));
    };
    // Always drained: a full pipe would stall the server.
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      reject(new Error(`server-everything exited (${String(code)}) before listening:\n${tail}`));
    });
  });
  const server: McpServerProcess = {
    url: `http://127.0.0.1:${String(port)}/mcp`,
    pid: child.pid ?? 0,
    output: () => tail,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await ended;
      clearTimeout(killer);
    },
  };
  try {
    await ready;
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/**
 * `@modelcontextprotocol/server-everything`, the MCP reference server (a project this one did
 * not write), in Streamable HTTP mode on a free loopback port. It takes its port from PORT; one
 * taken between choosing it and listening is chosen again.
 */
export async function startServerEverything(): Promise<McpServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce();
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === 3) throw error;
    }
  }
}
