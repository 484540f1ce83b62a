// RFC 9207 (authorization server issuer identification), as the MCP authorization specification
// (2025-11-25) asks of clients: an authorization response that comes back to Gatehouse's callback
// must name, in `iss`, the issuer of the authorization server the attempt was sent to. A response
// naming another issuer (a mix-up: the code or error came from elsewhere) is refused, and so is
// one without `iss` from a server whose metadata promises it
// (`authorization_response_iss_parameter_supported`): no code exchange, nothing stored, a branded
// page, and the worker's log saying which issuer was expected and what came. No real server this
// project runs sends a wrong `iss`, so the hostile ones are the scripted server
// (test/support/scripted-mcp-auth-server.ts); oidc-provider's own `iss` is taken in
// response-issuer-oidc.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { walkMcpLink, type McpWalk } from '../support/mcp-connect-walk.js';
import {
  startScriptedMcpAuthServer,
  type ScriptedMcpAuthServer,
} from '../support/scripted-mcp-auth-server.js';

/** Another authorization server's issuer: what a mix-up attacker's response would name. */
const OTHER_ISSUER = 'https://login.northwind.example/';

let stack: McpAuthStack;
let server: ScriptedMcpAuthServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startScriptedMcpAuthServer().then((started) => (stops.push(() => started.close()), started)),
  ]);
  await registerMcpApp(stack, {
    id: 'scripted',
    name: 'Scripted MCP',
    serverUrl: server.serverUrl,
  });
  // Gatehouse registers itself at the scripted server (dynamic client registration).
  const branded = await api(stack, 'PUT', '/v1/mcp-client-branding', { client_name: 'Northwind' });
  expect(branded.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

interface Outcome {
  /** The connect link walked. */
  url: string;
  walk: Extract<McpWalk, { stoppedAt: 'callback' }>;
  /** Token requests the authorization server received during the walk. */
  tokenRequests: number;
  /** The user's connections to the app, whatever their status. */
  connections: number;
  /** Worker log lines written during the walk. */
  workerLogs: string[];
  /** API log lines written during the walk. */
  apiLogs: string[];
}

async function newLink(user: string): Promise<string> {
  const created = await api(stack, 'POST', '/v1/connect/links', { user, app: 'scripted' });
  expect(created.status).toBe(201);
  return ((await created.json()) as { url: string }).url;
}

/**
 * A user connects through a fresh link (or `link`), the server answering as the test set it, and the browser
 * bringing back what `rewriteCallback` makes of its answer.
 */
async function connect(
  user: string,
  rewriteCallback?: (callback: URL) => void,
  link?: string,
): Promise<Outcome> {
  const url = link ?? (await newLink(user));
  const requestsFrom = server.requests.length;
  const workerFrom = stack.workerLogs.length;
  const apiFrom = stack.api.logs.length;
  const walk = await walkMcpLink(url, rewriteCallback ? { rewriteCallback } : {});
  if (walk.stoppedAt !== 'callback') throw new Error(`stopped at ${walk.stoppedAt}`);
  const [row] = await stack.db.sql<{ count: number }[]>`
    select count(*)::int as count from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} and c.app = 'scripted'`;
  return {
    url,
    walk,
    tokenRequests: server.requests
      .slice(requestsFrom)
      .filter((request) => request.url === '/as/token').length,
    connections: row?.count ?? 0,
    workerLogs: stack.workerLogs.slice(workerFrom),
    apiLogs: stack.api.logs.slice(apiFrom),
  };
}

/** Refused as RFC 9207 says: the branded page, no exchange, no connection. */
function expectRefused(outcome: Outcome) {
  expect(outcome.walk.page.status).toBe(502);
  expect(outcome.walk.page.html).toContain('We could not verify where you signed in');
  expect(outcome.tokenRequests).toBe(0);
  expect(outcome.connections).toBe(0);
}

/** The one log line saying why, naming the issuer expected and what the response said. */
function reasonIn(lines: string[], ...words: string[]): string {
  const named = lines.filter((line) => words.every((word) => line.includes(word)));
  expect(named).toHaveLength(1);
  return named[0] ?? '';
}

function expectConnected(outcome: Outcome) {
  expect(outcome.walk.page.status).toBe(200);
  expect(outcome.tokenRequests).toBe(1);
  expect(outcome.connections).toBe(1);
}

describe('an authorization server whose metadata advertises the iss parameter', () => {
  beforeAll(() => {
    server.issParameterSupported = true;
    server.responseError = null;
  });

  it('is refused when its response names another issuer: no code exchange, nothing stored, the reason logged', async () => {
    server.responseIss = OTHER_ISSUER;
    const outcome = await connect('u_wrong_iss');
    expect(outcome.walk.callbackUrl.searchParams.get('iss')).toBe(OTHER_ISSUER);
    expectRefused(outcome);
    reasonIn(outcome.workerLogs, server.issuer, OTHER_ISSUER, 'iss');
    // Only the attempt was spent: the same link connects once the answer is the server's own.
    server.responseIss = server.issuer;
    expectConnected(await connect('u_wrong_iss', undefined, outcome.url));
  });

  it('is refused when its response names its issuer with a trailing slash: RFC 9207 compares the strings exactly', async () => {
    server.responseIss = `${server.issuer}/`;
    const outcome = await connect('u_slash_iss');
    expectRefused(outcome);
    reasonIn(outcome.workerLogs, `"${server.issuer}/"`, 'iss');
  });

  it('is refused when its response carries no iss at all', async () => {
    server.responseIss = null;
    const outcome = await connect('u_no_iss');
    expect(outcome.walk.callbackUrl.searchParams.has('iss')).toBe(false);
    expectRefused(outcome);
    reasonIn(outcome.workerLogs, server.issuer, 'authorization_response_iss_parameter_supported');
  });

  it('is refused when its response carries iss twice, its own and another', async () => {
    server.responseIss = server.issuer;
    const outcome = await connect('u_two_iss', (callback) => {
      callback.searchParams.append('iss', OTHER_ISSUER);
    });
    expect(outcome.walk.callbackUrl.searchParams.getAll('iss')).toEqual([
      server.issuer,
      OTHER_ISSUER,
    ]);
    expectRefused(outcome);
    reasonIn(outcome.workerLogs, server.issuer, OTHER_ISSUER);
  });

  it('is connected when its response names its own issuer', async () => {
    server.responseIss = server.issuer;
    const outcome = await connect('u_own_iss');
    expect(outcome.walk.callbackUrl.searchParams.get('iss')).toBe(server.issuer);
    expectConnected(outcome);
  });

  it('an error response naming another issuer is not taken for this server’s refusal', async () => {
    server.responseError = 'access_denied';
    server.responseIss = OTHER_ISSUER;
    const outcome = await connect('u_denied_elsewhere');
    expectRefused(outcome);
    expect(outcome.walk.page.html).not.toContain('You declined access');
    reasonIn(outcome.apiLogs, server.issuer, OTHER_ISSUER);
    server.responseError = null;
  });

  it('an error response naming its own issuer is its refusal, as before', async () => {
    server.responseError = 'access_denied';
    server.responseIss = server.issuer;
    const outcome = await connect('u_denied_here');
    expect(outcome.walk.page.status).toBe(403);
    expect(outcome.walk.page.html).toContain('Access was not granted');
    expect(outcome.connections).toBe(0);
    server.responseError = null;
  });
});

describe('an authorization server whose metadata does not advertise the iss parameter', () => {
  beforeAll(() => {
    server.issParameterSupported = false;
    server.responseError = null;
  });

  it('is refused when its response still names another issuer (RFC 9207 §2.4: checked whenever present)', async () => {
    server.responseIss = OTHER_ISSUER;
    const outcome = await connect('u_unadvertised_wrong');
    expectRefused(outcome);
    reasonIn(outcome.workerLogs, server.issuer, OTHER_ISSUER);
  });

  it('is connected when its response carries no iss, as servers before RFC 9207 answer', async () => {
    server.responseIss = null;
    expectConnected(await connect('u_unadvertised_none'));
  });

  it('is connected when its response names its own issuer', async () => {
    server.responseIss = server.issuer;
    expectConnected(await connect('u_unadvertised_own'));
  });
});

describe('an authorization server that advertises the iss parameter in OpenID discovery only', () => {
  // The SDK keeps what its schema for OpenID provider metadata names, and that schema has no
  // `authorization_response_iss_parameter_supported`: Gatehouse reads it from the document.
  beforeAll(() => {
    server.metadataAt = 'openid';
    server.issParameterSupported = true;
    server.responseError = null;
  });

  it('is refused when its response carries no iss', async () => {
    server.responseIss = null;
    const outcome = await connect('u_openid_none');
    expect(
      server.requests.some((request) => request.url === '/as/.well-known/openid-configuration'),
    ).toBe(true);
    expectRefused(outcome);
    reasonIn(outcome.workerLogs, server.issuer, 'authorization_response_iss_parameter_supported');
  });

  it('is connected when its response names its own issuer', async () => {
    server.responseIss = server.issuer;
    expectConnected(await connect('u_openid_own'));
  });
});
