// A minted session's address survives MCP clients that rewrite URLs: the MCP
// Inspector's CLI on Node 20 (0.15.0, what an unpinned npx installs there) replaces any path that
// does not end in /mcp with /mcp, dropping the session's token. The address now ends in /mcp,
// addresses minted before still answer, and a request that lost its token is told so.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { connectMcp, mintSession, type MintedSession } from './mcp-client.js';
import { ensureInspector, inspectorCli, readmeInspectorVersion } from './inspector.js';
import { ensureNode22 } from './node22.js';
import { stopsAfterAll } from '../support/stops.js';

/** The newest Inspector checked (it declares Node 22.19 or newer). */
const NEWEST_INSPECTOR = '2.12.0';

let stack: CallStack;
let session: MintedSession;

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'address-test', version: '1.0.0' },
  },
});

function post(address: URL | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(address, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: initialize,
  });
}

/** The address as older versions minted it: the token last. */
const withoutFinalMcp = (url: string) => url.replace(/\/mcp$/, '');
const secretOf = (url: string) => /\/mcp\/(gkmcp_[A-Za-z0-9_-]{32})/.exec(url)?.[1] ?? '';

const started = stopsAfterAll();

beforeAll(async () => {
  // The Inspector runs outside this process and reaches the address as minted: the call stack's
  // API listens where PUBLIC_URL says.
  stack = started.add(await startCallStack());
  await stack.connect('u_ann');
  session = await mintSession(stack, { user: 'u_ann' });
}, 300_000);

describe('the session address', () => {
  it('is minted ending in /mcp, its token in the path before that', () => {
    expect(session.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/gkmcp_[A-Za-z0-9_-]{32}\/mcp$/);
  });

  it.each([
    ['as minted', (url: string) => url],
    ['without the final /mcp (as older versions minted it)', withoutFinalMcp],
    ['with a trailing slash', (url: string) => `${url}/`],
  ])('answers %s', async (_form, address) => {
    const mcp = await connectMcp(new URL(address(session.url)));
    try {
      expect((await mcp.listAll()).tools.map((tool) => tool.name)).toContain('acme__list_tasks');
    } finally {
      await mcp.close();
    }
  });

  it('keeps its token out of the logs in either form', async () => {
    expect((await post(session.url)).status).toBe(200);
    expect((await post(withoutFinalMcp(session.url))).status).toBe(200);
    const logs = stack.api.logs.join('\n');
    // Booleans: a failure must not print the logs, whose point is that they hold no secret.
    expect(logs.includes(secretOf(session.url))).toBe(false);
    expect(logs.includes('"url":"/mcp/[token]/mcp"')).toBe(true);
    expect(logs.includes('"url":"/mcp/[token]"')).toBe(true);
  });

  it('an address whose token was dropped is told so, not asked for an API key', async () => {
    const dropped = new URL('/mcp', session.url);
    const answer = await post(dropped);
    expect(answer.status).toBe(401);
    const body = (await answer.json()) as { error: { message: string; data: { code: string } } };
    expect(body.error.data.code).toBe('invalid_api_key');
    expect(body.error.message).toMatch(/session address/);
    expect(body.error.message).toMatch(/token/);
    expect(body.error.message).toMatch(/ends in \/mcp/);
    expect(body.error.message).not.toMatch(/^An API key is required/);
    // A key that is there but wrong is a key problem, said as before.
    const wrongKey = await post(dropped, { authorization: 'Bearer gk_test_nope' });
    expect(wrongKey.status).toBe(401);
    expect(((await wrongKey.json()) as { error: { message: string } }).error.message).not.toMatch(
      /session/,
    );
  });

  it('an unknown token in the new form is refused like one in the old', async () => {
    const forged = session.url.replace(secretOf(session.url), `gkmcp_${'A'.repeat(32)}`);
    const answer = await post(forged);
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });
});

describe('the MCP Inspector command line', () => {
  const toolsList = (url: string) => [url, '--transport', 'http', '--method', 'tools/list'];

  it('the version the README pins, on Node 20, lists the tools at the minted address', async () => {
    const script = await ensureInspector(await readmeInspectorVersion());
    const run = await inspectorCli(process.execPath, script, toolsList(session.url));
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(run.stdout).toContain('"acme__list_tasks"');
  }, 600_000);

  it('the pinned version, given an address without the final /mcp, is told its token was dropped', async () => {
    const script = await ensureInspector(await readmeInspectorVersion());
    const run = await inspectorCli(
      process.execPath,
      script,
      toolsList(withoutFinalMcp(session.url)),
    );
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/session address/);
  }, 600_000);

  it.each([
    ['as minted', (url: string) => url],
    ['without the final /mcp', withoutFinalMcp],
  ])(
    `the newest checked (${NEWEST_INSPECTOR}, Node 22) lists the tools at the address %s`,
    async (_form, address) => {
      const script = await ensureInspector(NEWEST_INSPECTOR);
      const run = await inspectorCli(await ensureNode22(), script, toolsList(address(session.url)));
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: 0,
        stderr: expect.any(String),
      });
      expect(run.stdout).toContain('"acme__list_tasks"');
    },
    600_000,
  );
});
