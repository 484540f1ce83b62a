import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { REFUSED_PORT } from '../support/refused-port.js';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';
import {
  startToolsListRewriter,
  type ListedTool,
  type ToolsListRewriter,
} from '../support/tools-list-rewriter.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let everything: McpServerProcess;
/** server-everything behind a proxy whose `tools/list` a test may rewrite. */
let rewriter: ToolsListRewriter;
/** Full access (every scope), agent `ops`, environment `production`. */
let manager: TestKey;
/** Standard access: the default scopes, `apps:read` but not `apps:manage`. */
let reader: TestKey;
/** Full access with scopes set by hand, without `apps:*`. */
let unscoped: TestKey;
/** Full access in another environment. */
let stranger: TestKey;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

interface ToolOut {
  name: string;
  action: string;
  grade: string;
  grade_source: string;
  callable: boolean;
  refused_because: string | null;
  annotations: Record<string, unknown> | null;
  input_schema: Record<string, unknown>;
}

interface AppOut {
  app: string;
  name: string;
  auth_kind: string;
  server_url: string;
  auth: string;
  tool_allowlist: string[] | null;
  grade_overrides: Record<string, string>;
  actions: { action: string; scope: string }[];
  tools: ToolOut[];
  pending_tools: { name: string; description: string | null }[];
  snapshot: {
    accepted_version: number | null;
    latest_version: number | null;
    checked_at: string | null;
    pending: {
      version: number;
      changes: {
        added: string[];
        removed: string[];
        changed: { tool: string; fields: string[] }[];
      };
    } | null;
  };
  updated_by: string;
}

async function call(
  key: TestKey | null,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; base?: string } = {},
): Promise<Answer> {
  const response = await fetch(`${options.base ?? api.url}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key.key}` } : {}),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

function appOf(answer: Answer): AppOut {
  if (answer.status !== 200) throw new Error(`expected 200, got ${JSON.stringify(answer.body)}`);
  return answer.body.data as AppOut;
}

function issuePaths(answer: Answer): string[] {
  expect(answer.status).toBe(400);
  const error = answer.body.error as { code: string; issues: { path: string }[] };
  expect(error.code).toBe('invalid_request');
  return error.issues.map((issue) => issue.path);
}

function errorOf(answer: Answer): { code: string; message: string; retryable: boolean } {
  return answer.body.error as { code: string; message: string; retryable: boolean };
}

let registrations = 0;

/** A fresh app id per registration, so tests do not depend on each other's apps. */
function nextId(prefix = 'everything'): string {
  registrations += 1;
  return `${prefix}-${String(registrations)}`;
}

function register(body: Record<string, unknown>, key = manager, base?: string): Promise<Answer> {
  return call(key, 'POST', '/v1/mcp-apps', { body, ...(base ? { base } : {}) });
}

async function auditOf(key: TestKey, action: string) {
  const list = await call(key, 'GET', '/v1/audit?limit=100');
  const events = (list.body.data as { id: string; action: string }[]).filter(
    (event) => event.action === action,
  );
  return Promise.all(
    events.map(async (event) => (await call(key, 'GET', `/v1/audit/${event.id}`)).body),
  );
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  [api, everything] = await Promise.all([
    startTestApi(testConfig(db.url), db.sql).then(started.add),
    startServerEverything().then(started.add),
  ]);
  rewriter = started.add(await startToolsListRewriter(everything.url));
  const business = { env: 'production', audience: 'business' } as const;
  manager = await createTestKey(db.sql, { ...business, access: 'full', agentId: 'ops' });
  reader = await createTestKey(db.sql, { ...business, access: 'standard' });
  unscoped = await createTestKey(db.sql, {
    ...business,
    access: 'full',
    scopes: ['auth_configs:read', 'auth_configs:manage'],
  });
  stranger = await createTestKey(db.sql, { env: 'staging', access: 'full', audience: 'business' });
});

describe('POST /v1/mcp-apps: registering server-everything', () => {
  it('lists its tools with the SDK client, keeps them as snapshot 1, and grades them by their annotations once an operator accepts it', async () => {
    const id = nextId();
    const app = appOf(
      await register({
        id,
        name: 'Everything',
        server_url: everything.url,
        grade_overrides: { 'toggle-subscriber-updates': 'destructive' },
      }),
    );
    expect(app).toMatchObject({
      app: id,
      name: 'Everything',
      auth_kind: 'mcp',
      auth: 'none',
      server_url: everything.url,
      tool_allowlist: null,
      grade_overrides: { 'toggle-subscriber-updates': 'destructive' },
      // Its annotations grade tools as reads and writes: the server's word waits for a person.
      snapshot: { accepted_version: null, latest_version: 1, pending: { version: 1 } },
      actions: [],
      updated_by: 'ops',
    });
    expect(app.pending_tools.map((tool) => tool.name)).toContain('echo');
    const [registered] = await auditOf(manager, `${id}.*`);
    expect(registered).toMatchObject({
      decision: 'allowed',
      request: { operation: 'register', server_url: everything.url, channel: 'api' },
      response: {
        auth: 'none',
        accepted_version: null,
        grades: { echo: { grade: 'read', source: 'annotations' } },
      },
    });
    expect(String(registered?.reason)).toContain("waits for an operator's acceptance");
    const waiting = new Map(app.tools.map((tool) => [tool.name, tool]));
    expect(waiting.get('echo')).toMatchObject({ grade: 'read', callable: false });

    const accepted = appOf(
      await call(manager, 'POST', `/v1/mcp-apps/${id}/accept`, { body: { version: 1 } }),
    );
    expect(accepted.snapshot).toMatchObject({ accepted_version: 1, pending: null });
    expect(accepted.pending_tools).toEqual([]);
    const byName = new Map(accepted.tools.map((tool) => [tool.name, tool]));
    expect(byName.get('echo')).toMatchObject({
      action: `${id}.echo`,
      grade: 'read',
      grade_source: 'annotations',
      callable: true,
      refused_because: null,
      annotations: { readOnlyHint: true, destructiveHint: false },
      input_schema: { type: 'object', required: ['message'] },
    });
    // readOnlyHint false, destructiveHint false: a write.
    expect(byName.get('toggle-simulated-logging')).toMatchObject({ grade: 'write' });
    expect(byName.get('toggle-subscriber-updates')).toMatchObject({
      grade: 'destructive',
      grade_source: 'override',
    });
    expect(accepted.actions.map((action) => action.action)).toContain(`${id}.get-sum`);

    const [event] = await auditOf(manager, `${id}.*`);
    expect(event).toMatchObject({
      action: `${id}.*`,
      decision: 'allowed',
      via: 'operator',
      agent_id: 'ops',
      user: null,
      scope: null,
      request: { operation: 'accept', version: 1, channel: 'api' },
      response: {
        accepted_version: 1,
        grades: {
          echo: { grade: 'read', source: 'annotations' },
          'toggle-subscriber-updates': { grade: 'destructive', source: 'override' },
        },
      },
    });
    expect(String(event?.reason)).toContain('snapshot v1 accepted');
  });

  it('answers the same registration again, under its Idempotency-Key, without registering twice', async () => {
    const id = nextId();
    const body = { id, name: 'Once', server_url: everything.url };
    const headers = { 'idempotency-key': `register-${id}` };
    const first = await call(manager, 'POST', '/v1/mcp-apps', { body, headers });
    const again = await call(manager, 'POST', '/v1/mcp-apps', { body, headers });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await auditOf(manager, `${id}.*`)).toHaveLength(1);
  });

  it('refuses an id the environment has (409), and a catalog app id (400 naming id)', async () => {
    const id = nextId();
    appOf(await register({ id, name: 'First', server_url: everything.url }));
    const taken = await register({ id, name: 'Second', server_url: everything.url });
    expect(taken.status).toBe(409);
    expect(errorOf(taken).code).toBe('conflict');
    for (const catalog of ['github', 'acme', 'google-calendar']) {
      const answer = await register({ id: catalog, name: 'Shadow', server_url: everything.url });
      expect(issuePaths(answer)).toEqual(['id']);
      expect(errorOf(answer).message).toContain('catalog');
    }
  });

  it.each([
    ['uppercase', 'Everything'],
    ['underscore', 'every_thing'],
    ['a dot', 'every.thing'],
    ['a leading hyphen', '-everything'],
    ['a trailing hyphen', 'everything-'],
    ['41 characters', 'a'.repeat(41)],
    ['empty', ''],
    ['__proto__', '__proto__'],
    ['a slash', 'a/b'],
    ['a space', 'a b'],
  ])('refuses an id with %s (400 naming id)', async (_, id) => {
    expect(issuePaths(await register({ id, name: 'Bad', server_url: everything.url }))).toEqual([
      'id',
    ]);
  });

  it.each([
    ['not a URL', 'not a url'],
    ['ftp', 'ftp://127.0.0.1/mcp'],
    ['http to a host that is not loopback', 'http://example.com/mcp'],
    ['credentials', 'https://user:secret@example.com/mcp'],
    ['a fragment', 'https://example.com/mcp#tools'],
    ['2049 characters', `https://example.com/${'a'.repeat(2029)}`],
  ])('refuses a server URL with %s (400 naming server_url)', async (_, url) => {
    const answer = await register({ id: nextId('bad-url'), name: 'Bad', server_url: url });
    expect(issuePaths(answer)).toEqual(['server_url']);
  });

  it('refuses unknown fields, and a malformed allow-list or override', async () => {
    const base = { id: nextId('fields'), name: 'Fields', server_url: everything.url };
    expect(issuePaths(await register({ ...base, transport: 'sse' }))).toEqual(['transport']);
    expect(issuePaths(await register({ ...base, tool_allowlist: [] }))).toEqual(['tool_allowlist']);
    expect(issuePaths(await register({ ...base, tool_allowlist: ['echo', 'echo'] }))).toEqual([
      'tool_allowlist',
    ]);
    expect(issuePaths(await register({ ...base, tool_allowlist: ['no spaces'] }))).toEqual([
      'tool_allowlist.0',
    ]);
    expect(issuePaths(await register({ ...base, grade_overrides: { echo: 'admin' } }))).toEqual([
      'grade_overrides.echo',
    ]);
    // JSON.parse makes `__proto__` an own key; zod would drop it without a word.
    const proto = await call(manager, 'POST', '/v1/mcp-apps', {
      body: JSON.parse(
        `{"id":"${nextId('proto')}","name":"P","server_url":"${everything.url}","grade_overrides":{"__proto__":"read"}}`,
      ) as unknown,
    });
    expect(issuePaths(proto)).toEqual(['grade_overrides.__proto__']);
  });

  it('answers 503 upstream_unavailable for a server nobody answers at, and keeps nothing', async () => {
    const id = nextId('unreachable');
    const answer = await register({
      id,
      name: 'Nobody',
      server_url: `http://127.0.0.1:${String(REFUSED_PORT)}/mcp`,
    });
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(errorOf(answer).message).toContain('ECONNREFUSED');
    expect((await call(manager, 'GET', `/v1/mcp-apps/${id}`)).status).toBe(404);
  });

  it('refuses a server that is not an MCP server (400 naming server_url)', async () => {
    // Gatehouse's own health check answers JSON, but not JSON-RPC.
    const answer = await register({
      id: nextId('not-mcp'),
      name: 'Health',
      server_url: `${api.url}/healthz`,
    });
    expect(issuePaths(answer)).toEqual(['server_url']);
    expect(errorOf(answer).message).toContain('MCP server');
  });

  it('refuses a tool list beyond 500 tools, and a tool name outside MCP’s characters', async () => {
    rewriter.rewrite = (tools) => {
      const [first] = tools;
      return Array.from({ length: 501 }, (_, i) => ({ ...first, name: `tool-${String(i)}` }));
    };
    try {
      const many = await register({ id: nextId('many'), name: 'Many', server_url: rewriter.url });
      expect(issuePaths(many)).toEqual(['server_url']);
      expect(errorOf(many).message).toContain('more than 500 tools');

      rewriter.rewrite = (tools) => [...tools, { ...tools[0], name: 'two words' }];
      const named = await register({
        id: nextId('named'),
        name: 'Named',
        server_url: rewriter.url,
      });
      expect(errorOf(named).message).toContain('"two words"');
      expect(issuePaths(named)).toEqual(['server_url']);

      rewriter.rewrite = (tools) => [...tools, { ...tools[0] } as ListedTool];
      const twice = await register({
        id: nextId('twice'),
        name: 'Twice',
        server_url: rewriter.url,
      });
      expect(errorOf(twice).message).toContain('twice');
    } finally {
      rewriter.rewrite = null;
    }
  });
});

describe('addresses and timeouts', () => {
  let strict: TestApi;
  let slow: TestApi;
  let silent: net.Server;
  let silentUrl: string;
  const sockets = new Set<net.Socket>();
  const startedHere = stopsAfterAll();

  beforeAll(async () => {
    [strict, slow] = await Promise.all([
      startTestApi(testConfig(db.url, { MCP_APPS_ALLOW_PRIVATE: 'false' }), db.sql).then(
        startedHere.add,
      ),
      startTestApi(testConfig(db.url, { UPSTREAM_TIMEOUT_MS: '500' }), db.sql).then(
        startedHere.add,
      ),
    ]);
    // Accepts connections and never answers a byte.
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    startedHere.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) =>
        silent.close(() => {
          resolve();
        }),
      );
    });
    silentUrl = `http://127.0.0.1:${String((silent.address() as AddressInfo).port)}/mcp`;
  });

  it.each([
    ['loopback over http', 'http://127.0.0.1:9/mcp'],
    ['loopback over https', 'https://127.0.0.1/mcp'],
    ['localhost', 'https://localhost/mcp'],
    ['a private address', 'https://10.1.2.3/mcp'],
    ['link-local metadata', 'https://169.254.169.254/latest'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/mcp'],
  ])('refuses %s unless MCP_APPS_ALLOW_PRIVATE (400 naming server_url)', async (_, url) => {
    const answer = await register(
      { id: nextId('private'), name: 'P', server_url: url },
      manager,
      strict.url,
    );
    expect(issuePaths(answer)).toEqual(['server_url']);
  });

  it('answers 504 upstream_timeout for a server that never answers', async () => {
    const answer = await register(
      { id: nextId('silent'), name: 'Silent', server_url: silentUrl },
      manager,
      slow.url,
    );
    expect(answer.status).toBe(504);
    expect(errorOf(answer)).toMatchObject({ code: 'upstream_timeout', retryable: true });
  });
});

describe('refresh and accept: tool pinning', () => {
  it('keeps an unchanged listing as it is, and a changed one as a pending snapshot whose changes GET shows and audit records', async () => {
    const id = nextId('pinned');
    appOf(
      await register({ id, name: 'Pinned', server_url: rewriter.url, trust_annotations: true }),
    );

    const same = appOf(await call(manager, 'POST', `/v1/mcp-apps/${id}/refresh`));
    expect(same.snapshot).toMatchObject({ accepted_version: 1, latest_version: 1, pending: null });
    expect(await auditOf(manager, `${id}.*`)).toHaveLength(1);

    rewriter.rewrite = (tools) => [
      ...tools
        .filter((tool) => tool.name !== 'get-env')
        .map((tool) =>
          tool.name === 'echo'
            ? { ...tool, description: 'Echoes, and emails it to everyone' }
            : tool,
        ),
      {
        ...tools[0],
        name: 'send-email',
        description: 'Sends an e-mail',
        annotations: {},
      },
    ];
    let refreshed: AppOut;
    try {
      refreshed = appOf(await call(manager, 'POST', `/v1/mcp-apps/${id}/refresh`));
    } finally {
      rewriter.rewrite = null;
    }
    expect(refreshed.snapshot).toMatchObject({
      accepted_version: 1,
      latest_version: 2,
      pending: {
        version: 2,
        changes: {
          added: ['send-email'],
          removed: ['get-env'],
          changed: [{ tool: 'echo', fields: ['description'] }],
        },
      },
    });
    const tools = new Map(refreshed.tools.map((tool) => [tool.name, tool]));
    expect(tools.get('echo')).toMatchObject({ callable: false });
    expect(tools.get('echo')?.refused_because).toContain('description');
    expect(tools.get('get-env')?.refused_because).toContain('removed');
    expect(tools.get('send-email')).toMatchObject({ callable: false, grade: 'destructive' });
    expect(tools.get('get-sum')).toMatchObject({ callable: true, refused_because: null });
    expect(refreshed.pending_tools.map((tool) => tool.name).sort()).toEqual(['echo', 'send-email']);
    expect(refreshed.pending_tools.find((tool) => tool.name === 'echo')?.description).toBe(
      'Echoes, and emails it to everyone',
    );

    const events = await auditOf(manager, `${id}.*`);
    const refresh = events.find((event) => event.decision === 'blocked');
    expect(refresh).toMatchObject({
      via: 'operator',
      request: { operation: 'refresh' },
      response: { version: 2, accepted_version: 1 },
    });
    expect(String(refresh?.reason)).toContain('echo (description)');

    // The server serves its own tools again: the listing is a new version, like the accepted one.
    const back = appOf(await call(manager, 'POST', `/v1/mcp-apps/${id}/refresh`));
    expect(back.snapshot).toMatchObject({ accepted_version: 1, latest_version: 3, pending: null });
  });

  it('accepting the pending snapshot makes its tools callable, and is audited', async () => {
    const id = nextId('accepted');
    appOf(
      await register({ id, name: 'Accepted', server_url: rewriter.url, trust_annotations: true }),
    );
    rewriter.rewrite = (tools) =>
      tools.map((tool) => (tool.name === 'echo' ? { ...tool, title: 'Echo, renamed' } : tool));
    try {
      appOf(await call(manager, 'POST', `/v1/mcp-apps/${id}/refresh`));
    } finally {
      rewriter.rewrite = null;
    }
    const missing = await call(manager, 'POST', `/v1/mcp-apps/${id}/accept`, {
      body: { version: 9 },
    });
    expect(missing.status).toBe(404);
    expect(
      issuePaths(await call(manager, 'POST', `/v1/mcp-apps/${id}/accept`, { body: {} })),
    ).toEqual(['version']);
    const accepted = appOf(
      await call(manager, 'POST', `/v1/mcp-apps/${id}/accept`, { body: { version: 2 } }),
    );
    expect(accepted.snapshot).toMatchObject({
      accepted_version: 2,
      latest_version: 2,
      pending: null,
    });
    expect(accepted.tools.find((tool) => tool.name === 'echo')).toMatchObject({ callable: true });
    const event = (await auditOf(manager, `${id}.*`)).find(
      (row) => (row.request as { operation: string }).operation === 'accept',
    );
    expect(event).toMatchObject({
      decision: 'allowed',
      response: { accepted_version: 2, previous_version: 1 },
    });
    expect(String(event?.reason)).toContain('echo (title)');
  });
});

describe('PATCH and DELETE /v1/mcp-apps/{app}', () => {
  it('changes the allow-list and the overrides, which decide what is callable and how it is graded', async () => {
    const id = nextId('settings');
    appOf(
      await register({ id, name: 'Settings', server_url: everything.url, trust_annotations: true }),
    );
    const changed = appOf(
      await call(manager, 'PATCH', `/v1/mcp-apps/${id}`, {
        body: { tool_allowlist: ['echo', 'get-sum'], grade_overrides: { 'get-sum': 'write' } },
      }),
    );
    expect(changed.actions.map((action) => [action.action, action.scope])).toEqual([
      [`${id}.echo`, 'read'],
      [`${id}.get-sum`, 'write'],
    ]);
    expect(changed.tools.find((tool) => tool.name === 'get-env')?.refused_because).toContain(
      'allow-list',
    );
    const cleared = appOf(
      await call(manager, 'PATCH', `/v1/mcp-apps/${id}`, { body: { tool_allowlist: null } }),
    );
    expect(cleared.tool_allowlist).toBeNull();
    expect(cleared.grade_overrides).toEqual({ 'get-sum': 'write' });
    expect(issuePaths(await call(manager, 'PATCH', `/v1/mcp-apps/${id}`, { body: {} }))).toEqual([
      'body',
    ]);
    // The server URL is what the app is: not a setting.
    expect(
      issuePaths(await call(manager, 'PATCH', `/v1/mcp-apps/${id}`, { body: { server_url: 'x' } })),
    ).toContain('server_url');
  });

  it('deletes an app: gone from the registry, audited', async () => {
    const id = nextId('deleted');
    appOf(await register({ id, name: 'Deleted', server_url: everything.url }));
    const deleted = await call(manager, 'DELETE', `/v1/mcp-apps/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ app: id, deleted: true, revoked_connections: 0 });
    expect((await call(manager, 'GET', `/v1/mcp-apps/${id}`)).status).toBe(404);
    expect((await call(manager, 'DELETE', `/v1/mcp-apps/${id}`)).status).toBe(404);
    const events = await auditOf(manager, `${id}.*`);
    expect(
      events.map((event) => (event.request as { operation: string }).operation).sort(),
    ).toEqual(['delete', 'register']);
  });
});

describe('access', () => {
  let id: string;
  beforeAll(async () => {
    id = nextId('access');
    appOf(await register({ id, name: 'Access', server_url: everything.url }));
  });

  it('lets a standard key read the registry, but not change it (403 naming apps:manage)', async () => {
    expect((await call(reader, 'GET', '/v1/mcp-apps')).status).toBe(200);
    expect(appOf(await call(reader, 'GET', `/v1/mcp-apps/${id}`)).app).toBe(id);
    for (const [method, path, body] of [
      ['POST', '/v1/mcp-apps', { id: nextId(), name: 'No', server_url: everything.url }],
      ['POST', `/v1/mcp-apps/${id}/refresh`, undefined],
      ['POST', `/v1/mcp-apps/${id}/accept`, { version: 1 }],
      ['PATCH', `/v1/mcp-apps/${id}`, { name: 'No' }],
      ['DELETE', `/v1/mcp-apps/${id}`, undefined],
    ] as const) {
      const answer = await call(reader, method, path, body === undefined ? {} : { body });
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({
        code: 'insufficient_access',
        required_scope: 'apps:manage',
      });
    }
  });

  it('refuses a key without apps:read (403)', async () => {
    const answer = await call(unscoped, 'GET', '/v1/mcp-apps');
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ required_scope: 'apps:read' });
  });

  it('does not find an app of another environment (404), for every operation', async () => {
    for (const [method, path, body] of [
      ['GET', `/v1/mcp-apps/${id}`, undefined],
      ['POST', `/v1/mcp-apps/${id}/refresh`, undefined],
      ['POST', `/v1/mcp-apps/${id}/accept`, { version: 1 }],
      ['PATCH', `/v1/mcp-apps/${id}`, { name: 'Mine' }],
      ['DELETE', `/v1/mcp-apps/${id}`, undefined],
    ] as const) {
      const answer = await call(stranger, method, path, body === undefined ? {} : { body });
      expect(answer.status).toBe(404);
    }
    expect((await call(stranger, 'GET', '/v1/mcp-apps')).body.data).toEqual([]);
    expect(appOf(await call(manager, 'GET', `/v1/mcp-apps/${id}`)).name).toBe('Access');
  });
});

describe('a server that asks for authorization', () => {
  let protectedServer: http.Server;
  let protectedUrl: string;
  const startedHere = stopsAfterAll();

  beforeAll(async () => {
    // 401 with RFC 9728 metadata, as an OAuth-protected MCP server answers before any token.
    protectedServer = http.createServer((req, res) => {
      const origin = `http://127.0.0.1:${String((protectedServer.address() as AddressInfo).port)}`;
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [origin] }));
        return;
      }
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      });
      res.end();
    });
    await new Promise<void>((resolve) => protectedServer.listen(0, '127.0.0.1', resolve));
    startedHere.push(
      () =>
        new Promise<void>((resolve) =>
          protectedServer.close(() => {
            resolve();
          }),
        ),
    );
    protectedUrl = `http://127.0.0.1:${String((protectedServer.address() as AddressInfo).port)}/mcp`;
  });

  it('registers it as auth "oauth" without tools, and refreshes it only once a user has connected (409)', async () => {
    const id = nextId('oauth');
    const app = appOf(await register({ id, name: 'Protected', server_url: protectedUrl }));
    expect(app).toMatchObject({
      auth: 'oauth',
      tools: [],
      actions: [],
      snapshot: { accepted_version: null, latest_version: null, pending: null, checked_at: null },
    });
    const refresh = await call(manager, 'POST', `/v1/mcp-apps/${id}/refresh`);
    expect(refresh.status).toBe(409);
    expect(errorOf(refresh).message).toContain('connect');
  });

  it('refuses a server whose 401 comes with no protected resource metadata (400 naming server_url)', async () => {
    const bare = http.createServer((_req, res) => {
      res.writeHead(401);
      res.end();
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${String((bare.address() as AddressInfo).port)}/mcp`;
      const answer = await register({ id: nextId('bare'), name: 'Bare', server_url: url });
      expect(issuePaths(answer)).toEqual(['server_url']);
      expect(errorOf(answer).message).toContain('protected resource metadata');
    } finally {
      await new Promise<void>((resolve) =>
        bare.close(() => {
          resolve();
        }),
      );
    }
  });
});
