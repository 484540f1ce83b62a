// Stoplight Prism (./prism-cli.ts) serving an OpenAPI document on loopback: an upstream made from
// nothing but a real API's published description, for the OpenAPI import tests
// (test/support/prism-server.ts hands this on) and the benchmark's OpenAPI call scenario
// (infra/bench/openapi-call.ts), which may not import from test/.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { ensurePrism, nodeEnv } from './prism-cli.js';

/**
 * Prism in mock mode. It checks each request against the document (path, method, parameters,
 * content type, body) and answers one that fails with the operation's 422 (else its 400, else its
 * default; an unsupported content type its 415 first), naming the violations in its output; a
 * valid one gets the operation's lowest 2xx with the document's own example, the same every time.
 * Two gaps to know of, both Prism's:
 * - a schema its ajv cannot compile is not checked at all, silently: in GitHub's description
 *   `nullable` beside `oneOf` with no `type` (ajv refuses it) leaves 9 of 344 request bodies
 *   unchecked, `POST /repos/{owner}/{repo}/issues` among them;
 * - a body that is not JSON under a JSON content type gets no answer (the request hangs).
 */
export interface PrismServer {
  /** `http://127.0.0.1:<port>`: the document's paths go right after it. */
  url: string;
  /** What Prism printed so far (its log of each request, the validator's findings), last 256 KB. */
  output(): string;
  stop(): Promise<void>;
}

export interface PrismOptions {
  /**
   * Answer with data generated from the schemas (json-schema-faker) instead of the document's
   * examples. Off by default: examples are realistic and the same on every run.
   */
  dynamic?: boolean;
  /** With `dynamic`, the seed that makes the generated data repeatable. */
  seed?: string;
}

const OUTPUT_KEPT = 256 * 1024;
const LISTENING = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/;

/**
 * Starts Prism on `document` (a path), on loopback at a port it chooses itself (`--port 0`: the
 * port it binds is read back from its output, so no port is assumed free), and resolves once it
 * answers HTTP. A large document takes a while: GitHub's 13 MB description about 10 s on a
 * 2-core machine. `stop()` ends it (a test registers it with `started.add(…)`).
 */
export async function startPrism(
  document: string,
  options: PrismOptions = {},
): Promise<PrismServer> {
  const prism = await ensurePrism();
  const args = [
    ...prism.args,
    'mock',
    document,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    `--dynamic=${String(options.dynamic ?? false)}`,
    // Prism's default: an invalid request is refused, and only its own violations are errors.
    '--errors=false',
    // Info, not less: the line naming the port is an info line.
    '--verboseLevel',
    'info',
    ...(options.seed === undefined ? [] : ['--seed', options.seed]),
  ];
  // No colour codes in what a failure shows.
  const env = { ...nodeEnv(), NO_COLOR: '1', FORCE_COLOR: '0' };
  const child = spawn(prism.command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  try {
    const url = await listeningUrl(child, () => output, document);
    await answers(url);
    return { url, output: () => output, stop: () => kill(child) };
  } catch (error) {
    // A start that failed part-way leaves no Prism behind; its own error is the one thrown.
    await kill(child).catch(() => undefined);
    throw error;
  }
}

/** The address Prism says it listens on; rejects with its output if it ends before saying so. */
function listeningUrl(
  child: ChildProcess,
  output: () => string,
  document: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = LISTENING.exec(output());
      if (found?.[1]) {
        child.stdout?.off('data', check);
        child.off('exit', exited);
        resolve(found[1]);
      }
    };
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      const tail = output().split('\n').slice(-30).join('\n');
      reject(
        new Error(
          `prism mock ${document} ended (${signal ?? `code ${String(code)}`}) before listening:\n${tail}`,
        ),
      );
    };
    child.stdout?.on('data', check);
    child.once('exit', exited);
    check();
  });
}

/** Resolves once Prism answers an HTTP request, whatever the status (404 for `/`, likely). */
function answers(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = request(`${url}/`, { method: 'HEAD' }, (response) => {
      response.resume();
      resolve();
    });
    probe.on('error', reject);
    probe.end();
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
