import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * A real MCP server (the SDK's `McpServer` over Streamable HTTP, stateless) whose authorization
 * server is the demo app, an oidc-provider: a remote MCP server whose authorization server
 * advertises and sends `iss` in its authorization responses (RFC 9207). A request without a token the demo app's API accepts is refused 401
 * pointing at its protected resource metadata (RFC 9728), which names the demo app. One tool,
 * `whoami` (read-only), answers the account the token belongs to.
 */
export interface DemoProtectedMcpServer {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  serverUrl: string;
  close(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/** The account a token belongs to, as the demo app's own API says; null when it refuses it. */
async function accountOf(
  demoUrl: string,
  authorization: string | undefined,
): Promise<string | null> {
  if (!authorization) return null;
  const response = await fetch(`${demoUrl}/me`, { headers: { authorization } });
  if (response.status !== 200) return null;
  return ((await response.json()) as { id: string }).id;
}

export async function startDemoProtectedMcpServer(
  demoUrl: string,
): Promise<DemoProtectedMcpServer> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  const serverUrl = `${origin}/mcp`;

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    void (async () => {
      const body = await readBody(req);
      if (req.url === '/.well-known/oauth-protected-resource/mcp') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            resource: serverUrl,
            authorization_servers: [demoUrl],
            scopes_supported: ['tasks:read'],
          }),
        );
        return;
      }
      if (req.url !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const account = await accountOf(demoUrl, req.headers.authorization);
      if (account === null) {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        });
        res.end();
        return;
      }
      // Stateless: no session, so no standalone stream (GET) and nothing to end (DELETE).
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      const mcp = new McpServer({ name: 'demo-tasks', version: '1.0.0' });
      mcp.registerTool(
        'whoami',
        { description: 'The account this token acts for', annotations: { readOnlyHint: true } },
        () => ({ content: [{ type: 'text', text: account }] }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(body) as unknown);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  return {
    serverUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
