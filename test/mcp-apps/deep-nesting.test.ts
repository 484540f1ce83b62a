import { beforeAll, describe, expect, it } from '@jest/globals';
import { authFetch } from '../../activities/mcp-auth/auth-fetch.js';
import { answeredWithin } from '../support/answered-within.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { startRawMcpServer, type RawMcpServer } from '../support/raw-mcp-server.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * JSON from a remote MCP server nested far deeper than anything Gatehouse keeps: JavaScript's
 * JSON.parse reads it, but JSON.stringify (a Temporal payload, a jsonb column) and ajv's
 * compiler recurse, and overflow their stack. Each place such JSON comes in refuses it at once,
 * saying why; none answers 500 or waits for a timeout (a tool result nested 20,000 deep was
 * retried until the caller got 504 after 30 s).
 */
const LEVELS = 20_000;
const deep = `${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}`;
const READ_ONLY = { readOnlyHint: true };

let stack: CallStack;
let server: RawMcpServer;

const started = stopsAfterAll();

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startCallStack().then(started.add),
    startRawMcpServer().then(started.add),
  ]);
});

/** A bound far above any prompt answer, for a loaded machine: only that one came is asserted. */
function answered(what: string, pending: Promise<Answer>): Promise<Answer> {
  return answeredWithin(what, 45_000, pending);
}

let apps = 0;

function register(): Promise<Answer> {
  apps += 1;
  return answered(
    'the registration',
    stack.request(stack.key, 'POST', '/v1/mcp-apps', {
      // Trusting the server's annotations: its read-only tool is callable at once.
      body: {
        id: `raw-${String(apps)}`,
        name: 'Raw',
        server_url: server.url,
        trust_annotations: true,
      },
    }),
  );
}

function errorOf(answer: Answer): { code: string; message: string; issues?: { path: string }[] } {
  return answer.body.error as { code: string; message: string; issues?: { path: string }[] };
}

function expectRefusedServer(answer: Answer, ...words: string[]): void {
  expect(answer.status).toBe(400);
  expect(errorOf(answer).code).toBe('invalid_request');
  expect(errorOf(answer).issues?.map((issue) => issue.path)).toEqual(['server_url']);
  for (const word of words) expect(errorOf(answer).message).toContain(word);
  expect(errorOf(answer).message).not.toContain('call stack');
}

describe('a remote tool result nested 20,000 deep', () => {
  it('is answered at once, 503 upstream_unavailable saying why, and audited', async () => {
    server.protectedBy = null;
    server.toolsList = JSON.stringify({
      tools: [{ name: 'deep', inputSchema: { type: 'object' }, annotations: READ_ONLY }],
    });
    const registered = await register();
    expect(registered.status).toBe(200);
    const app = (registered.body.data as { app: string }).app;
    server.toolsCall = `{"content":[{"type":"text","text":"x"}],"structuredContent":{"rows":${deep}}}`;

    const answer = await answered(
      'the call',
      stack.run(`${app}.deep`, { user: 'u_deep', input: {} }),
    );
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatchObject({ code: 'upstream_unavailable' });
    expect(errorOf(answer).message).toContain('nests deeper than 512 levels');
    // Asked once: a malformed answer is not worth asking for again.
    expect(server.received.filter((method) => method === 'tools/call')).toHaveLength(1);

    const list = await stack.request(stack.key, 'GET', '/v1/audit?limit=100');
    const event = (list.body.data as { id: string; action: string }[]).find(
      (row) => row.action === `${app}.deep`,
    );
    const audited = (await stack.request(stack.key, 'GET', `/v1/audit/${event?.id ?? ''}`)).body;
    expect(audited).toMatchObject({ decision: 'failed', scope: 'read' });
    expect(String(audited.reason)).toContain('nests deeper than 512 levels');
  });
});

describe('a remote tool listing nested deep', () => {
  it('refuses an input schema nested 20,000 deep, naming the tool', async () => {
    server.protectedBy = null;
    server.toolsList = `{"tools":[{"name":"deep","inputSchema":{"type":"object","properties":{"a":{"default":${deep}}}}}]}`;
    expectRefusedServer(await register(), '"deep"', 'nests deeper than');
  });

  it('refuses an input schema whose references chain a thousand deep, naming the tool', async () => {
    server.protectedBy = null;
    const defs = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, i) => [
        `d${String(i)}`,
        { properties: { a: { $ref: `#/$defs/d${String(i + 1)}` } } },
      ]),
    );
    server.toolsList = JSON.stringify({
      tools: [
        {
          name: 'chained',
          inputSchema: {
            type: 'object',
            $defs: { ...defs, d1000: { type: 'string' } },
            properties: { a: { $ref: '#/$defs/d0' } },
          },
        },
      ],
    });
    // Refused by its depth or its compile budget, whichever comes first on this machine.
    const refused = await register();
    expectRefusedServer(refused, '"chained"');
    expect(errorOf(refused).message).toMatch(/nest too deeply to compile|longer than \d+ ms/);
  });

  it('refuses protected resource metadata nested 20,000 deep', async () => {
    server.protectedBy = `{"resource":"${server.url}","authorization_servers":["${new URL(server.url).origin}"],"x":${deep}}`;
    try {
      expectRefusedServer(await register(), 'nests deeper than');
    } finally {
      server.protectedBy = null;
    }
  });
});

describe('an OAuth document nested 20,000 deep', () => {
  it('is refused by the fetch of the connect flow, saying why', async () => {
    server.protectedBy = `{"resource":"${server.url}","x":${deep}}`;
    try {
      const fetchFn = authFetch({ mcpApps: { allowPrivate: true } });
      const url = `${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`;
      await expect(fetchFn(url)).rejects.toThrow('nests deeper than');
    } finally {
      server.protectedBy = null;
    }
  });
});
