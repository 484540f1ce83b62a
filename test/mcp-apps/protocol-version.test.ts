// Which MCP protocol revision each remote server speaks: the one its `initialize` answered when
// Gatehouse last listed its tools, kept on the app and shown by the management API and the
// command line. Gatehouse's client (the SDK's) offers its newest revision and takes any it
// supports, so a server may settle on an older one: the MCP reference server (server-everything,
// on the same SDK) speaks the newest; the hand-written server answers what the test sets.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { showMcpAppCommand } from '../../infra/cli/mcp-apps.js';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { startRawMcpServer, type RawMcpServer } from '../support/raw-mcp-server.js';
import { stopsAfterAll } from '../support/stops.js';

/** The revision before the newest, which the SDK's client still accepts. */
const OLDER = '2025-06-18';
const ENV = 'protocol';

let db: TestDatabase;
let api: TestApi;
let key: TestKey;
let raw: RawMcpServer;
let everything: McpServerProcess;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  const config = testConfig(db.url);
  [api, raw, everything] = await Promise.all([
    startTestApi(config, db.sql).then(started.add),
    startRawMcpServer().then(started.add),
    startServerEverything().then(started.add),
  ]);
  await ensureEnvironment(db.sql, ENV);
  key = await createTestKey(db.sql, { env: ENV, access: 'full' });
});

interface AppView {
  protocol_version: string | null;
  snapshot: { checked_at: string | null };
}

async function call(method: string, path: string, body?: unknown): Promise<AppView> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...bearer(key.key),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json()) as { data: AppView };
  expect({ path, status: response.status }).toEqual({ path, status: 200 });
  return answer.data;
}

describe('the MCP protocol revision of a remote MCP app', () => {
  it('is the newest for the MCP reference server, shown by GET and the command line', async () => {
    const registered = await call('POST', '/v1/mcp-apps', {
      id: 'everything',
      name: 'Everything',
      server_url: everything.url,
    });
    expect(registered.protocol_version).toBe(LATEST_PROTOCOL_VERSION);
    expect((await call('GET', '/v1/mcp-apps/everything')).protocol_version).toBe(
      LATEST_PROTOCOL_VERSION,
    );
    const shown = await showMcpAppCommand(db.sql, 'everything', { env: ENV });
    expect(shown).toMatch(
      new RegExp(
        `^protocol +MCP ${LATEST_PROTOCOL_VERSION} \\(negotiated at the last listing\\)$`,
        'm',
      ),
    );
    const json = await showMcpAppCommand(db.sql, 'everything', { env: ENV, json: true });
    expect(JSON.parse(json)).toMatchObject({ protocol_version: LATEST_PROTOCOL_VERSION });
  });

  it('is the older revision a server settled on, and follows the server at each refresh', async () => {
    raw.protocolVersion = OLDER;
    const registered = await call('POST', '/v1/mcp-apps', {
      id: 'older',
      name: 'Older',
      server_url: raw.url,
    });
    expect(registered.protocol_version).toBe(OLDER);
    expect(await showMcpAppCommand(db.sql, 'older', { env: ENV })).toMatch(
      new RegExp(`^protocol +MCP ${OLDER} `, 'm'),
    );

    // The same server, upgraded: it now answers the revision Gatehouse offers.
    raw.protocolVersion = null;
    const refreshed = await call('POST', '/v1/mcp-apps/older/refresh');
    expect(refreshed.protocol_version).toBe(LATEST_PROTOCOL_VERSION);
    expect((await call('GET', '/v1/mcp-apps/older')).protocol_version).toBe(
      LATEST_PROTOCOL_VERSION,
    );
    // The tools did not change: no new snapshot, only the check and the revision.
    const [row] = await db.sql<{ versions: number }[]>`
      select count(*)::int as versions from mcp_app_snapshots where app_id = 'older'`;
    expect(row?.versions).toBe(1);
  });

  it('is null, said as such, for a server not listed yet (one that asks for authorization)', async () => {
    raw.protectedBy = JSON.stringify({
      resource: raw.url,
      authorization_servers: ['https://login.northwind.example/'],
    });
    try {
      const registered = await call('POST', '/v1/mcp-apps', {
        id: 'protected',
        name: 'Protected',
        server_url: raw.url,
      });
      expect(registered).toMatchObject({ protocol_version: null, snapshot: { checked_at: null } });
      expect(await showMcpAppCommand(db.sql, 'protected', { env: ENV })).toMatch(
        /^protocol +not listed yet$/m,
      );
    } finally {
      raw.protectedBy = null;
    }
  });
});
