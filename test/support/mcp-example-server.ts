import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOrUndo } from './stops.js';
import { startTcpProxy } from './tcp-proxy.js';

/** One request the example server received (test/support/request-recorder.mjs). */
export interface ReceivedRequest {
  port: number;
  method: string;
  url: string;
  authorization: string | null;
  body: Record<string, unknown> | null;
  status: number;
}

/**
 * The MCP SDK's example OAuth-protected Streamable HTTP server (`simpleStreamableHttp --oauth
 * --oauth-strict`): an MCP server and, on a port of its own, its demo authorization server
 * (dynamic registration, PKCE S256, resource indicators checked strictly, consent granted at
 * once, no refresh tokens), with every request it receives recorded.
 */
export interface McpExampleServer {
  /** The MCP endpoint, as the server names itself (`http://localhost:<port>/mcp`). */
  serverUrl: string;
  /** The authorization server's issuer (`http://localhost:<port>/`). */
  issuer: string;
  /** What the authorization server received, in order. */
  authRequests(): Promise<ReceivedRequest[]>;
  /**
   * Stops the server and starts it again at the same addresses: its authorization server, which
   * keeps everything in memory, then knows no client, code or token it issued before.
   */
  restart(): Promise<void>;
  /** A client registered at the authorization server directly, as an operator would. */
  registerClient(metadata: Record<string, unknown>): Promise<{
    client_id: string;
    client_secret?: string;
  }>;
  stop(): Promise<void>;
}

const recorder = fileURLToPath(new URL('./request-recorder.mjs', import.meta.url));
const anyPort = fileURLToPath(new URL('./listen-on-any-port.mjs', import.meta.url));

const example = fileURLToPath(
  new URL(
    '../../node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js',
    import.meta.url,
  ),
);

/** The ports the child bound, by the port it was told, once each of `told` is bound. */
function boundPorts(
  child: ChildProcess,
  told: number[],
  output: () => string,
): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const bound = new Map<number, number>();
      for (const [, asked, port] of output().matchAll(/^listening-any-port (\d+) (\d+)$/gm)) {
        bound.set(Number(asked), Number(port));
      }
      if (told.every((port) => bound.has(port))) resolve(bound);
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      reject(new Error(`the example server exited (${String(code)}):\n${output()}`));
    });
  });
}

/**
 * The example names its ports in its metadata, so it must be told them, and a restart must keep
 * them. They are the ports of two proxies this process holds for the server's whole life; the
 * server itself binds free ports (test/support/listen-on-any-port.mjs) each time it starts, and
 * the proxies pass to them. Nothing can take its advertised ports, before a start or a restart.
 */
export async function startMcpExampleServer(): Promise<McpExampleServer> {
  return startOrUndo(async (stops) => {
    const mcp = stops.add(await startTcpProxy(null, { everyInterface: true }));
    const auth = stops.add(await startTcpProxy(null, { everyInterface: true }));
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-mcp-example-'));
    stops.push(() => rm(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'requests.jsonl');
    const env: Record<string, string | undefined> = {
      ...process.env,
      MCP_PORT: String(mcp.port),
      MCP_AUTH_PORT: String(auth.port),
      LISTEN_ANY_PORT_FOR: `${String(mcp.port)},${String(auth.port)}`,
      RECORD_REQUESTS_TO: log,
    };
    // Jest's options are for this process, not the server.
    delete env.NODE_OPTIONS;
    /** Every port the authorization server has listened on, across restarts (the recorder's). */
    const authPorts = new Set<number>();
    let output = '';
    const launch = async (): Promise<ChildProcess> => {
      const child = spawn(
        process.execPath,
        ['--import', anyPort, '--import', recorder, example, '--oauth', '--oauth-strict'],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        const bound = await boundPorts(child, [mcp.port, auth.port], () => output);
        mcp.retarget({ host: '127.0.0.1', port: bound.get(mcp.port) ?? 0 });
        auth.retarget({ host: '127.0.0.1', port: bound.get(auth.port) ?? 0 });
        authPorts.add(bound.get(auth.port) ?? 0);
      } catch (error) {
        await kill(child);
        throw error;
      }
      return child;
    };
    const kill = async (child: ChildProcess) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    };
    let child = await launch();
    stops.push(() => kill(child));
    const issuer = `http://localhost:${String(auth.port)}/`;
    return {
      serverUrl: `http://localhost:${String(mcp.port)}/mcp`,
      issuer,
      async authRequests() {
        const text = await readFile(log, 'utf8').catch(() => '');
        return text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as ReceivedRequest)
          .filter((request) => authPorts.has(request.port));
      },
      async registerClient(metadata) {
        const response = await fetch(`${issuer}register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(metadata),
        });
        if (response.status !== 201) throw new Error(`registration: ${String(response.status)}`);
        return (await response.json()) as { client_id: string; client_secret?: string };
      },
      async restart() {
        mcp.retarget(null);
        auth.retarget(null);
        await kill(child);
        child = await launch();
      },
      // Last started first: the server, its folder, the proxies.
      stop: () => stops.stopAll(),
    };
  });
}
