import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tool as `tools/list` carries it. */
export type ListedTool = Record<string, unknown> & { name: string };

export interface ToolsListRewriter {
  /** The proxy's own MCP endpoint (same path as the server's). */
  url: string;
  /** Applied to every `tools/list` result from now on; null passes it through unchanged. */
  rewrite: ((tools: ListedTool[]) => ListedTool[]) | null;
  close(): Promise<void>;
}

/** Rewrites `tools` in one JSON-RPC message, leaving any other message as it is. */
function rewriteMessage(text: string, rewrite: (tools: ListedTool[]) => ListedTool[]): string {
  let message: { result?: { tools?: ListedTool[] } };
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    // Not a JSON-RPC message (an SSE event without data, a priming event): kept as it is.
    return text;
  }
  if (!Array.isArray(message.result?.tools)) return text;
  return JSON.stringify({
    ...message,
    result: { ...message.result, tools: rewrite(message.result.tools) },
  });
}

/** An SSE body's `data:` lines rewritten event by event; other lines kept. */
function rewriteEvents(body: string, rewrite: (tools: ListedTool[]) => ListedTool[]): string {
  return body
    .split('\n')
    .map((line) =>
      line.startsWith('data: ') ? `data: ${rewriteMessage(line.slice(6), rewrite)}` : line,
    )
    .join('\n');
}

/**
 * A small HTTP proxy in front of a real MCP server that changes what its `tools/list` answers,
 * for the tests that pin an app's tool set: the server is the real one for everything else
 * (initialize, calls, sessions, streams), so a test can serve a changed tool set without a server
 * of its own.
 * Only POSTs that carry a `tools/list` request are buffered; everything else is piped.
 */
export async function startToolsListRewriter(target: string): Promise<ToolsListRewriter> {
  const upstream = new URL(target);
  const state: ToolsListRewriter = {
    url: '',
    rewrite: null,
    close: () => Promise.resolve(),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let listing = false;
      try {
        listing =
          req.method === 'POST' &&
          (JSON.parse(body.toString('utf8')) as { method?: unknown }).method === 'tools/list';
      } catch {
        listing = false;
      }
      const headers = { ...req.headers, host: upstream.host };
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers,
        },
        (answer) => {
          const rewrite = state.rewrite;
          if (!listing || rewrite === null) {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            return;
          }
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            const sse = (answer.headers['content-type'] ?? '').includes('text/event-stream');
            const rewritten = sse ? rewriteEvents(text, rewrite) : rewriteMessage(text, rewrite);
            const out = { ...answer.headers };
            delete out['content-length'];
            delete out['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, out);
            res.end(rewritten);
          });
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      // A client that goes away (a closed SSE stream) ends the forwarded request too.
      res.on('close', () => forward.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${String(port)}${upstream.pathname}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    });
  return state;
}
