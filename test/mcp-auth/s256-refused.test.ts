// An authorization server that does not advertise PKCE S256 is refused: the
// SDK itself goes ahead when `code_challenge_methods_supported` is absent. No real server this
// project could run lacks S256 (the SDK's example server and the conformance suite's both
// advertise it), so this negative case alone uses a stub: an MCP server's 401 and the two
// metadata documents, nothing more.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConnectLink } from '../../activities/db/connect-links.js';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { walkMcpLink } from '../support/mcp-connect-walk.js';
import { REFUSED_PORT } from '../support/refused-port.js';

interface Stub {
  url: string;
  /** `code_challenge_methods_supported` as advertised; undefined: the field is left out. */
  methods: string[] | undefined;
  /** Whether the authorization server publishes metadata at all. */
  metadata: boolean;
  /** Paths asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

async function startStub(): Promise<Stub> {
  const stub = {
    methods: undefined as string[] | undefined,
    metadata: true,
    requests: [] as string[],
  };
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    stub.requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const json = (body: unknown) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && req.url === '/mcp') {
      res.statusCode = 401;
      res.setHeader(
        'WWW-Authenticate',
        `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
      );
      res.end();
    } else if (req.url === '/.well-known/oauth-protected-resource/mcp') {
      json({ resource: `${base}/mcp`, authorization_servers: [`${base}/as`] });
    } else if (req.url === '/.well-known/oauth-authorization-server/as' && stub.metadata) {
      json({
        issuer: `${base}/as`,
        authorization_endpoint: `${base}/as/authorize`,
        token_endpoint: `${base}/as/token`,
        registration_endpoint: `${base}/as/register`,
        response_types_supported: ['code'],
        ...(stub.methods ? { code_challenge_methods_supported: stub.methods } : {}),
      });
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(stub, {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  });
}

let stack: McpAuthStack;
let stub: Stub;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [stack, stub] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startStub().then((started) => (stops.push(() => started.close()), started)),
  ]);
  await registerMcpApp(stack, { id: 'no-pkce', name: 'No PKCE', serverUrl: stub.url });
  // With branding, registration would be possible: only S256 stands in the way.
  await api(stack, 'PUT', '/v1/mcp-client-branding', { client_name: 'Northwind' });
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

const createLink = (user: string) =>
  api(stack, 'POST', '/v1/connect/links', { user, app: 'no-pkce' });

async function errorOf(response: Response) {
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

describe('an authorization server without PKCE S256', () => {
  it.each([
    ['leaves code_challenge_methods_supported out', undefined],
    ['advertises plain only', ['plain']],
  ])('that %s: the link is refused with 409 conflict', async (_case, methods) => {
    stub.methods = methods;
    const response = await createLink('u_refused');
    expect(response.status).toBe(409);
    const error = await errorOf(response);
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('does not advertise PKCE S256');
    expect(stub.requests.filter((r) => r.startsWith('POST /as/register'))).toEqual([]);
  });

  it('is refused at the start of a link made before, on a branded page, with nothing registered', async () => {
    stub.methods = undefined;
    const user = await upsertConnectedUser(
      stack.db.sql,
      stack.environmentId,
      'u_old_link',
      undefined,
    );
    const { token } = await createConnectLink(stack.db.sql, stack.config.encryption, {
      environmentId: stack.environmentId,
      connectedUserId: user.id,
      app: 'no-pkce',
      purpose: 'connect',
      ttlSeconds: 3600,
    });
    const walk = await walkMcpLink(`${stack.config.api.publicUrl}/connect/${token}`);
    if (walk.stoppedAt !== 'start') throw new Error(`went on to ${walk.stoppedAt}`);
    expect(walk.page.status).toBe(409);
    expect(walk.page.html).toContain('not available yet');
    expect(
      stub.requests.filter((r) => r.includes('/as/register') || r.includes('/as/authorize')),
    ).toEqual([]);
  });

  it('is accepted once it advertises S256 (the stub is otherwise sound)', async () => {
    stub.methods = ['S256'];
    expect((await createLink('u_ok')).status).toBe(201);
  });
});

describe('an MCP app Gatehouse cannot discover', () => {
  it('whose authorization server publishes no metadata: 409 conflict', async () => {
    stub.metadata = false;
    const response = await createLink('u_nometa');
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain('publishes no metadata');
    stub.metadata = true;
  });

  it('that does not answer: 503 upstream_unavailable', async () => {
    await stack.db.sql`
      update mcp_apps set server_url = ${`http://127.0.0.1:${String(REFUSED_PORT)}/mcp`}
      where id = 'no-pkce'`;
    const response = await createLink('u_down');
    expect(response.status).toBe(503);
    expect((await errorOf(response)).code).toBe('upstream_unavailable');
  });
});
