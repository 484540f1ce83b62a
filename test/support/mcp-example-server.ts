import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../infra/dev/free-port.js';

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
   * Stops the server and starts it again on the same ports: its authorization server, which
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

const example = fileURLToPath(
  new URL(
    '../../node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js',
    import.meta.url,
  ),
);

/** Resolves once the child printed every line in `lines`; rejects if it ends first. */
function printed(child: ChildProcess, lines: string[], output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (lines.every((line) => output().includes(line))) resolve();
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      reject(new Error(`the example server exited (${String(code)}):\n${output()}`));
    });
  });
}

export async function startMcpExampleServer(): Promise<McpExampleServer> {
  const [mcpPort, authPort] = [await freePort(), await freePort()];
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-mcp-example-'));
  const log = path.join(dir, 'requests.jsonl');
  const env: Record<string, string | undefined> = {
    ...process.env,
    MCP_PORT: String(mcpPort),
    MCP_AUTH_PORT: String(authPort),
    RECORD_REQUESTS_TO: log,
  };
  // Jest's options are for this process, not the server.
  delete env.NODE_OPTIONS;
  let output = '';
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(
      process.execPath,
      ['--import', recorder, example, '--oauth', '--oauth-strict'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await printed(
      child,
      [
        `OAuth Authorization Server listening on port ${String(authPort)}`,
        `MCP Streamable HTTP Server listening on port ${String(mcpPort)}`,
      ],
      () => output,
    );
    return child;
  };
  const kill = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  let child = await launch();
  const issuer = `http://localhost:${String(authPort)}/`;
  return {
    serverUrl: `http://localhost:${String(mcpPort)}/mcp`,
    issuer,
    async authRequests() {
      const text = await readFile(log, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ReceivedRequest)
        .filter((request) => request.port === authPort);
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
      await kill(child);
      child = await launch();
    },
    async stop() {
      await kill(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
