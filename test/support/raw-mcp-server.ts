import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A remote MCP server written by hand, JSON-RPC over plain HTTP answers: what it answers to
 * `tools/list` and `tools/call` is raw JSON text the test sets, so it can send what no SDK
 * server would write (JSON nested deeper than JavaScript can stringify). `initialize` is
 * answered as MCP says; a notification gets 202. With `protectedBy` set, every MCP request is
 * refused 401 pointing at `/.well-known/oauth-protected-resource`, which answers that text.
 */
export interface RawMcpServer {
  url: string;
  /** `result` of `tools/list`, as JSON text. */
  toolsList: string;
  /** `result` of `tools/call`, as JSON text. */
  toolsCall: string;
  /** The protocol revision `initialize` answers with; null: the one the client asked for. */
  protocolVersion: string | null;
  /** The protected resource metadata document, as JSON text; null answers without a 401. */
  protectedBy: string | null;
  /** Every JSON-RPC method received, in order. */
  received: string[];
  /** Resolves once the next answer to `method` has been sent whole. */
  answered(method: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRawMcpServer(): Promise<RawMcpServer> {
  const waiting = new Map<string, (() => void)[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(state.protectedBy ?? '{}');
        return;
      }
      if (state.protectedBy !== null) {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        });
        res.end();
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(200).end();
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number | string;
        method: string;
        params?: { protocolVersion?: string };
      };
      state.received.push(message.method);
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        message.method === 'initialize'
          ? JSON.stringify({
              protocolVersion: state.protocolVersion ?? message.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'raw', version: '1.0.0' },
            })
          : message.method === 'tools/list'
            ? state.toolsList
            : message.method === 'tools/call'
              ? state.toolsCall
              : '{}';
      res.on('finish', () => {
        for (const wake of waiting.get(message.method)?.splice(0) ?? []) wake();
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${result}}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  const state: RawMcpServer = {
    url: `${origin}/mcp`,
    toolsList: '{"tools":[]}',
    toolsCall: '{"content":[]}',
    protocolVersion: null,
    protectedBy: null,
    received: [],
    answered: (method) =>
      new Promise((resolve) => {
        waiting.set(method, [...(waiting.get(method) ?? []), resolve]);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  return state;
}
