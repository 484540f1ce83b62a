import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startRawMcpServer, type RawMcpServer } from '../support/raw-mcp-server.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A remote MCP server's input schemas cost what the server chooses to compile: ajv compiles
 * synchronously, and 30 tools of ~62 KB held the API's event loop 12 s per refresh, /healthz
 * waiting with everything else. The schema below is 10 KB (within every snapshot limit) and
 * takes ajv seconds to compile: 200 references to one 200-property object, each inlined. It is
 * refused past its budget, naming the tool, and the API answers other requests meanwhile.
 */
let db: TestDatabase;
let api: TestApi;
let key: TestKey;
let server: RawMcpServer;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  [api, server] = await Promise.all([
    startTestApi(testConfig(db.url), db.sql).then(started.add),
    startRawMcpServer().then(started.add),
  ]);
  key = await createTestKey(db.sql, { env: 'production', access: 'full', agentId: 'ops' });
});

function costly(): Record<string, unknown> {
  const object = Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [`p${String(i)}`, { type: 'string' }]),
  );
  const references = Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [`r${String(i)}`, { $ref: '#/$defs/o' }]),
  );
  return {
    type: 'object',
    $defs: { o: { type: 'object', properties: object } },
    properties: references,
  };
}

interface Answer {
  status: number;
  body: { error?: { code: string; message: string; issues?: { path: string }[] } };
}

async function send(path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${key.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

describe('a listing whose input schema is costly to compile', () => {
  it('is refused past the compile budget naming the tool (400), and /healthz is answered while it compiles', async () => {
    server.toolsList = JSON.stringify({
      tools: [
        { name: 'fine', inputSchema: { type: 'object' } },
        { name: 'costly', inputSchema: costly() },
        // Compiled last: a listing whose compiling ends in a refusal answers as soon as it ends.
        { name: 'last', inputSchema: { type: 'object', properties: { a: { type: 'strin' } } } },
      ],
    });
    const order: string[] = [];
    const listed = server.answered('tools/list');
    const registration = send('/v1/mcp-apps', {
      id: 'costly',
      name: 'Costly',
      server_url: server.url,
    }).then((answer) => {
      order.push('registration');
      return answer;
    });
    await listed;
    // Sent once the server's listing has left, while Gatehouse compiles it.
    const health = fetch(`${api.url}/healthz`).then((response) => {
      order.push('healthz');
      return response.status;
    });
    const [refused, healthy] = await Promise.all([registration, health]);

    expect(healthy).toBe(200);
    expect(order).toEqual(['healthz', 'registration']);
    expect(refused.status).toBe(400);
    expect(refused.body.error?.issues?.map((issue) => issue.path)).toEqual(['server_url']);
    expect(refused.body.error?.message).toContain('"costly"');
    expect(refused.body.error?.message).toContain('longer than 1000 ms to compile');
    expect((await send('/v1/mcp-apps/costly')).status).toBe(404);
  }, 120_000);
});
