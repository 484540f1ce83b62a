// OpenAPI apps end to end on a hand-written document: registering, listing, calling through the
// call workflow (real Temporal and Postgres), pinning, and every hostile input the registry
// refuses. The app's API is a small recording server on loopback.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import {
  OpenApiRegistryError,
  registerOpenApiApp,
} from '../../activities/openapi-registry/registry.js';
import { findSnapshotEvents } from './registry-support.js';
import { insertMcpApp } from '../../activities/db/mcp-apps.js';
import { enterCredential } from '../support/credential-form.js';
import { connectMcp, mintSession } from '../mcp/mcp-client.js';

interface Received {
  method: string;
  url: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A key the app no longer takes (rotated there): it answers 401. */
const ROTATED_KEY = 'rotated_at_the_app_0123456789';

let stack: CallStack;
let upstream: http.Server;
let upstreamUrl: string;
const received: Received[] = [];
let stranger: TestKey;

/**
 * A pet store: two reads, a write, a credential-needing read (by default its key goes in a cookie,
 * which Gatehouse never sends: not callable; `secretsScheme: 'key'`: an API key in a header).
 */
function petStore(
  changes: { getPetPath?: string; extraOperation?: boolean; secretsScheme?: string } = {},
) {
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1.0.0' },
    servers: [{ url: upstreamUrl }],
    components: {
      securitySchemes: {
        key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        session: { type: 'apiKey', in: 'cookie', name: 'sid' },
      },
    },
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          summary: 'List pets',
          parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 } }],
          responses: { '200': { description: 'ok' } },
        },
        post: {
          operationId: 'createPet',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['name'],
                  properties: { name: { type: 'string' } },
                  additionalProperties: false,
                },
              },
            },
          },
          responses: { '201': { description: 'created' } },
        },
      },
      [changes.getPetPath ?? '/pets/{id}']: {
        get: {
          operationId: 'getPet',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/secrets': {
        get: {
          operationId: 'getSecrets',
          security: [{ [changes.secretsScheme ?? 'session']: [] }],
          responses: { '200': { description: 'ok' } },
        },
      },
      ...(changes.extraOperation
        ? {
            '/toys': {
              get: { operationId: 'listToys', responses: { '200': { description: 'ok' } } },
            },
          }
        : {}),
    },
  };
}

function errorOf(answer: Answer): { code: string; message: string; issues?: unknown } {
  return answer.body.error as { code: string; message: string; issues?: unknown };
}

interface OperationOut {
  name: string;
  action: string;
  grade: string;
  grade_source: string;
  callable: boolean;
  refused_because: string | null;
}

function operationsOf(answer: Answer): OperationOut[] {
  return (answer.body.data as { operations: OperationOut[] }).operations;
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      if (req.headers['x-api-key'] === ROTATED_KEY) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'bad key' }));
        return;
      }
      if (req.url?.startsWith('/pets/missing')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'no such pet' }));
        return;
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url, body: body || null }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${String((upstream.address() as AddressInfo).port)}`;
  stack = await startCallStack({ env: { MCP_APPS_ALLOW_PRIVATE: 'true' } });
  stranger = await createTestKey(stack.db.sql, { env: 'elsewhere', access: 'full' });
  const registered = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
    body: { id: 'pets', name: 'Pets', document: petStore() },
  });
  expect(registered.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack.stop();
  await new Promise((resolve) => upstream.close(resolve));
});

describe('registering an OpenAPI app', () => {
  it('lists its operations, graded by method, callable unless they need a credential', async () => {
    const shown = await stack.request(stack.key, 'GET', '/v1/openapi-apps/pets');
    expect(shown.status).toBe(200);
    const data = shown.body.data as Record<string, unknown>;
    expect(data).toMatchObject({
      app: 'pets',
      auth_kind: 'openapi',
      base_url: upstreamUrl,
      snapshot: { accepted_version: 1, latest_version: 1, pending: null },
    });
    const operations = operationsOf(shown);
    expect(operations.map((one) => [one.name, one.grade, one.grade_source, one.callable])).toEqual([
      ['create_pet', 'write', 'method', true],
      ['get_pet', 'read', 'method', true],
      ['get_secrets', 'read', 'method', false],
      ['list_pets', 'read', 'method', true],
    ]);
    expect(operations.find((one) => one.name === 'get_secrets')?.refused_because).toMatch(
      /needs a credential/,
    );
    const actions = await stack.request(stack.key, 'GET', '/v1/actions?app=pets');
    expect((actions.body.data as { action: string }[]).map((one) => one.action).sort()).toEqual([
      'pets.create_pet',
      'pets.get_pet',
      'pets.list_pets',
    ]);
    const events = await findSnapshotEvents(stack.db.sql, stack.environmentId, 'pets');
    expect(events.map((event) => event.request.operation)).toContain('register');
  });

  it('refuses clashing ids, malformed documents and bodies, naming the field', async () => {
    const register = (body: unknown) =>
      stack.request(stack.key, 'POST', '/v1/openapi-apps', { body });
    const taken = await register({ id: 'pets', name: 'Again', document: petStore() });
    expect([taken.status, errorOf(taken).code]).toEqual([409, 'conflict']);
    const catalog = await register({ id: 'acme', name: 'Acme', document: petStore() });
    expect([catalog.status, errorOf(catalog).code]).toEqual([400, 'invalid_request']);
    expect(JSON.stringify(errorOf(catalog).issues)).toContain('"id"');
    const malformed = await register({ id: 'broken', name: 'Broken', document: '{"openapi": ' });
    expect([malformed.status, errorOf(malformed).code]).toEqual([400, 'invalid_request']);
    expect(JSON.stringify(errorOf(malformed).issues)).toContain('"document"');
    const notOpenApi = await register({ id: 'broken', name: 'Broken', document: { hello: 1 } });
    expect(notOpenApi.status).toBe(400);
    const both = await register({
      id: 'broken',
      name: 'Broken',
      document: petStore(),
      document_url: `${upstreamUrl}/doc`,
    });
    expect(both.status).toBe(400);
    const badId = await register({ id: 'Bad_Id', name: 'x', document: petStore() });
    expect(badId.status).toBe(400);
    const deep = await register({
      id: 'deep',
      name: 'Deep',
      document: `${'['.repeat(200)}${']'.repeat(200)}`,
    });
    expect([deep.status, errorOf(deep).code]).toEqual([400, 'invalid_request']);
    expect(JSON.stringify(errorOf(deep).issues)).toContain('document_depth');
    // An MCP app may not take an OpenAPI app's id either (refused before its server is asked).
    const mcp = await stack.request(stack.key, 'POST', '/v1/mcp-apps', {
      body: { id: 'pets', name: 'Pets', server_url: 'http://127.0.0.1:9/mcp' },
    });
    expect([mcp.status, errorOf(mcp).code]).toEqual([409, 'conflict']);
    // Nor when it passed that check before the OpenAPI app was registered (two registrations at
    // once): its insert, under the same lock, finds the OpenAPI app and stores nothing.
    const raced = await stack.db.sql.begin((tx) =>
      insertMcpApp(
        tx,
        {
          environmentId: stack.environmentId,
          id: 'pets',
          name: 'Pets',
          serverUrl: 'http://127.0.0.1:9/mcp',
          auth: 'none',
          toolAllowlist: null,
          gradeOverrides: {},
          updatedBy: 'test',
          protocolVersion: null,
        },
        [],
        true,
      ),
    );
    expect(raced).toBeNull();
    const listed = await stack.request(stack.key, 'GET', '/v1/openapi-apps');
    expect((listed.body.data as { app: string }[]).map((one) => one.app)).toEqual(['pets']);
  });

  it('refuses a document_url and a base_url at a private address unless allowed', async () => {
    const deps = {
      sql: stack.db.sql,
      config: { mcpApps: { allowPrivate: false }, upstream: { timeoutMs: 5_000 } },
    };
    const actor = {
      environmentId: stack.environmentId,
      agentId: 'ops',
      channel: 'api' as const,
      traceId: 'test',
    };
    const settings = {
      id: 'private',
      name: 'Private',
      baseUrl: null,
      operationAllowlist: null,
      gradeOverrides: {},
      trustDocumentGrades: false,
      authScheme: null,
    };
    const fetched = await registerOpenApiApp(deps, actor, {
      ...settings,
      source: { documentUrl: 'https://127.0.0.1:9/openapi.json' },
    }).catch((error: unknown) => error);
    expect(fetched).toBeInstanceOf(OpenApiRegistryError);
    expect((fetched as OpenApiRegistryError).field).toBe('document_url');
    const based = await registerOpenApiApp(deps, actor, {
      ...settings,
      source: { document: JSON.stringify(petStore()) },
      baseUrl: 'https://10.0.0.1/api',
    }).catch((error: unknown) => error);
    expect((based as OpenApiRegistryError).field).toBe('base_url');
    expect((based as Error).message).toMatch(/MCP_APPS_ALLOW_PRIVATE/);
  });

  it('is not seen nor called from another environment', async () => {
    const shown = await stack.request(stranger, 'GET', '/v1/openapi-apps/pets');
    expect(shown.status).toBe(404);
    const run = await stack.run('pets.list_pets', { user: 'u_1', input: {} }, { key: stranger });
    expect([run.status, errorOf(run).code]).toEqual([404, 'not_found']);
  });
});

describe('a document fetched from document_url', () => {
  it('is fetched again by a refresh, and a change there is pending', async () => {
    let served = JSON.stringify(petStore());
    const host = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(served);
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${String((host.address() as AddressInfo).port)}/openapi.json`;
    try {
      const registered = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
        body: { id: 'fetched', name: 'Fetched', document_url: url },
      });
      expect(registered.body.data).toMatchObject({
        document_url: url,
        base_url: upstreamUrl,
        snapshot: { accepted_version: 1 },
      });
      const same = await stack.request(stack.key, 'POST', '/v1/openapi-apps/fetched/refresh');
      expect(same.body.data).toMatchObject({ snapshot: { latest_version: 1, pending: null } });
      served = JSON.stringify(petStore({ extraOperation: true }));
      const changed = await stack.request(stack.key, 'POST', '/v1/openapi-apps/fetched/refresh');
      expect(changed.body.data).toMatchObject({
        snapshot: {
          accepted_version: 1,
          pending: { version: 2, changes: { added: ['list_toys'] } },
        },
      });
      served = 'not: [an openapi document';
      const broken = await stack.request(stack.key, 'POST', '/v1/openapi-apps/fetched/refresh');
      expect([broken.status, errorOf(broken).code]).toEqual([400, 'invalid_request']);
      expect(JSON.stringify(errorOf(broken).issues)).toContain('document_url');
      await stack.request(stack.key, 'DELETE', '/v1/openapi-apps/fetched');
    } finally {
      await new Promise((resolve) => host.close(resolve));
    }
  });
});

describe("the document's own grades", () => {
  const graded = () => ({
    openapi: '3.0.3',
    info: { title: 'Graded', version: '1' },
    servers: [{ url: upstreamUrl }],
    paths: {
      '/wipe': {
        post: {
          operationId: 'wipe',
          'x-gatehouse-scope': 'read',
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  });

  it('wait for an operator unless the registration trusts them', async () => {
    const waiting = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
      body: { id: 'graded', name: 'Graded', document: graded() },
    });
    expect(waiting.status).toBe(200);
    expect(waiting.body.data).toMatchObject({
      snapshot: { accepted_version: null, latest_version: 1, pending: { version: 1 } },
    });
    expect(operationsOf(waiting)[0]).toMatchObject({
      name: 'wipe',
      grade: 'read',
      grade_source: 'extension',
      callable: false,
    });
    const refused = await stack.run('graded.wipe', { user: 'u_1', input: {} });
    expect([refused.status, errorOf(refused).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(refused).message).toMatch(/no operator has accepted yet/);
    const accepted = await stack.request(stack.key, 'POST', '/v1/openapi-apps/graded/accept', {
      body: { version: 1 },
    });
    expect(operationsOf(accepted)[0]?.callable).toBe(true);

    const trusted = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
      body: { id: 'graded-2', name: 'Graded', document: graded(), trust_document_grades: true },
    });
    expect(trusted.body.data).toMatchObject({ snapshot: { accepted_version: 1, pending: null } });
    for (const id of ['graded', 'graded-2']) {
      expect((await stack.request(stack.key, 'DELETE', `/v1/openapi-apps/${id}`)).status).toBe(200);
    }
  });
});

describe('calling its operations', () => {
  it('runs a read through the call workflow and passes the answer through', async () => {
    const before = received.length;
    const run = await stack.run('pets.get_pet', { user: 'u_1', input: { path: { id: 'rex' } } });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ ok: true, data: { method: 'GET', url: '/pets/rex' } });
    expect(received.length).toBe(before + 1);
    const failed = await stack.run('pets.get_pet', {
      user: 'u_1',
      input: { path: { id: 'missing' } },
    });
    expect(failed.body).toMatchObject({ ok: false, upstream_status: 404 });
  });

  it("is a tool of Gatehouse's MCP server, app__operation, and runs there", async () => {
    const session = await mintSession(stack, { user: 'u_1', apps: ['pets'] });
    const mcp = await connectMcp(session.address);
    try {
      const { tools } = await mcp.listAll();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'pets__create_pet',
        'pets__get_pet',
        'pets__list_pets',
      ]);
      expect(tools.find((tool) => tool.name === 'pets__get_pet')?.inputSchema).toMatchObject({
        type: 'object',
        properties: { path: expect.any(Object) },
      });
      const before = received.length;
      const result = await mcp.call('pets__get_pet', { path: { id: 'tom' } });
      expect(result.isError ?? false).toBe(false);
      expect(JSON.stringify(result.structuredContent ?? result.content)).toContain('/pets/tom');
      expect(received.length).toBe(before + 1);
    } finally {
      await mcp.close();
    }
  });

  it('refuses bad input before any workflow, naming the field, and a path that escapes', async () => {
    const before = received.length;
    const wrongType = await stack.run('pets.list_pets', {
      user: 'u_1',
      input: { query: { limit: 'many' } },
    });
    expect([wrongType.status, errorOf(wrongType).code]).toEqual([400, 'invalid_request']);
    expect(errorOf(wrongType).message).toContain('input.query.limit');
    const escape = await stack.run('pets.get_pet', { user: 'u_1', input: { path: { id: '..' } } });
    expect([escape.status, errorOf(escape).code]).toEqual([400, 'invalid_request']);
    expect(errorOf(escape).message).toContain('input.path.id');
    const slash = await stack.run('pets.get_pet', {
      user: 'u_1',
      input: { path: { id: '../admin' } },
    });
    expect(slash.body).toMatchObject({ ok: true, data: { url: '/pets/..%2Fadmin' } });
    const unknown = await stack.run('pets.list_pets', {
      user: 'u_1',
      input: { query: { other: 1 } },
    });
    expect(unknown.status).toBe(400);
    expect(received.length).toBe(before + 1);
  });

  it('refuses an operation whose credential Gatehouse cannot send, sending nothing', async () => {
    const before = received.length;
    const run = await stack.run('pets.get_secrets', { user: 'u_1', input: {} });
    expect([run.status, errorOf(run).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(run).message).toMatch(/needs a credential: .*session.*cookie/);
    expect(received.length).toBe(before);
  });

  it('holds a write, and runs it exactly once when approved', async () => {
    const before = received.filter((one) => one.method === 'POST').length;
    const input = { body: { name: 'Rex' } };
    const held = await stack.run('pets.create_pet', { user: 'u_1', input });
    expect([held.status, errorOf(held).code]).toEqual([403, 'approval_required']);
    const id = (errorOf(held) as unknown as { approval: { id: string } }).approval.id;
    const decided = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`);
    expect(decided.status).toBe(200);
    const [first, second] = [
      await stack.run('pets.create_pet', { user: 'u_1', input }),
      await stack.run('pets.create_pet', { user: 'u_1', input }),
    ];
    expect(first.body).toMatchObject({
      ok: true,
      data: { method: 'POST', body: '{"name":"Rex"}' },
    });
    expect(second.status).toBe(403);
    expect(received.filter((one) => one.method === 'POST').length).toBe(before + 1);
  });
});

describe('users connected with an API key', () => {
  const app = 'keyed-pets';

  /** A connect link for `user`, opened and the key typed in: the connection id. */
  async function connectWith(user: string, key: string): Promise<string> {
    const link = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user, app, redirect_url: 'https://product.example/done' },
    });
    expect(link.status).toBe(201);
    return enterCredential(link.body.url as string, { secret: key });
  }

  beforeAll(async () => {
    const registered = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
      body: { id: app, name: 'Keyed Pets', document: petStore({ secretsScheme: 'key' }) },
    });
    expect(registered.status).toBe(200);
  });

  it('enter it on the hosted page; a call sends it in the declared header, and only there', async () => {
    const shown = await stack.request(stack.key, 'GET', `/v1/openapi-apps/${app}`);
    expect(shown.body.data).toMatchObject({
      auth_scheme: null,
      connection: { kind: 'credential', scheme: 'key' },
    });
    expect(operationsOf(shown).find((one) => one.name === 'get_secrets')?.callable).toBe(true);

    const before = received.length;
    const unconnected = await stack.run(`${app}.get_secrets`, { user: 'u_key', input: {} });
    expect(errorOf(unconnected).code).toBe('connection_required');
    // Through Gatehouse's MCP server, the agent gets a connect link for the user.
    const session = await mintSession(stack, { user: 'u_key', apps: [app] });
    const mcp = await connectMcp(session.address);
    try {
      // Listed once the user is connected, as a catalog app's tools are.
      const listed = (await mcp.listAll()).tools.map((tool) => tool.name);
      expect(listed).toContain(`${app}__list_pets`);
      expect(listed).not.toContain(`${app}__get_secrets`);
      const result = await mcp.call(`${app}__get_secrets`, {});
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        error: { code: 'connection_required', connect_url: expect.stringContaining('/connect/') },
      });
    } finally {
      await mcp.close();
    }
    expect(received.length).toBe(before);

    const key = `pk_live_${randomBytes(18).toString('base64url')}`;
    expect(await connectWith('u_key', key)).not.toBe('');
    const connected = await connectMcp(session.address);
    try {
      const listed = (await connected.listAll()).tools.map((tool) => tool.name);
      expect(listed).toContain(`${app}__get_secrets`);
    } finally {
      await connected.close();
    }
    const run = await stack.run(`${app}.get_secrets`, { user: 'u_key', input: {} });
    expect(run.body).toMatchObject({ ok: true, data: { method: 'GET', url: '/secrets' } });
    expect(received.at(-1)?.headers['x-api-key']).toBe(key);

    // An operation that needs no credential goes without it.
    const open = await stack.run(`${app}.list_pets`, { user: 'u_key', input: {} });
    expect(open.body).toMatchObject({ ok: true, data: { url: '/pets' } });
    expect(received.at(-1)?.headers['x-api-key']).toBeUndefined();

    // The key is in no audit row of these calls.
    const [audit] = await stack.db.sql<{ text: string | null }[]>`
      select string_agg(row_to_json(a)::text, ' ') as text from audit_events a
      where action like ${`${app}.%`}`;
    expect(audit?.text).toContain('get_secrets');
    expect(audit?.text).not.toContain(key);
  });

  it('a key the app refuses (401) expires the connection: the next call asks for a reconnect', async () => {
    expect(await connectWith('u_rotated', ROTATED_KEY)).not.toBe('');
    const refused = await stack.run(`${app}.get_secrets`, { user: 'u_rotated', input: {} });
    expect(refused.body).toMatchObject({ ok: false, upstream_status: 401 });
    const before = received.length;
    const next = await stack.run(`${app}.get_secrets`, { user: 'u_rotated', input: {} });
    expect(errorOf(next).code).toBe('connection_expired');
    expect(received.length).toBe(before);
  });

  it("takes an operator's scheme only when the document has it and Gatehouse can send it", async () => {
    for (const scheme of ['session', 'nowhere']) {
      const patched = await stack.request(stack.key, 'PATCH', `/v1/openapi-apps/${app}`, {
        body: { auth_scheme: scheme },
      });
      expect(patched.status).toBe(400);
      expect(JSON.stringify(errorOf(patched))).toContain('auth_scheme');
    }
    const shown = await stack.request(stack.key, 'GET', `/v1/openapi-apps/${app}`);
    expect(shown.body.data).toMatchObject({ auth_scheme: null, connection: { scheme: 'key' } });
  });
});

describe('pinning', () => {
  it('refuses a changed operation until its snapshot is accepted; others keep working', async () => {
    const refreshed = await stack.request(stack.key, 'POST', '/v1/openapi-apps/pets/refresh', {
      body: { document: petStore({ getPetPath: '/animals/{id}', extraOperation: true }) },
    });
    expect(refreshed.status).toBe(200);
    const pending = (refreshed.body.data as { snapshot: { pending: unknown } }).snapshot.pending;
    expect(pending).toMatchObject({
      version: 2,
      changes: { added: ['list_toys'], changed: [{ operation: 'get_pet', fields: ['path'] }] },
    });
    const changed = await stack.run('pets.get_pet', { user: 'u_1', input: { path: { id: 'a' } } });
    expect([changed.status, errorOf(changed).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(changed).message).toMatch(/changed its path in snapshot v2/);
    const added = await stack.run('pets.list_toys', { user: 'u_1', input: {} });
    expect(errorOf(added).code).toBe('denied_by_policy');
    const unchanged = await stack.run('pets.list_pets', { user: 'u_1', input: {} });
    expect(unchanged.body).toMatchObject({ ok: true, data: { url: '/pets' } });

    const accepted = await stack.request(stack.key, 'POST', '/v1/openapi-apps/pets/accept', {
      body: { version: 2 },
    });
    expect(accepted.status).toBe(200);
    const now = await stack.run('pets.get_pet', { user: 'u_1', input: { path: { id: 'a' } } });
    expect(now.body).toMatchObject({ ok: true, data: { url: '/animals/a' } });
    const events = await findSnapshotEvents(stack.db.sql, stack.environmentId, 'pets');
    expect(events.map((event) => [event.request.operation, event.decision])).toEqual(
      expect.arrayContaining([
        ['refresh', 'blocked'],
        ['accept', 'allowed'],
      ]),
    );
  });

  it('refuses a call held before its operation changed, when it runs after approval', async () => {
    const input = { body: { name: 'Held' } };
    const held = await stack.run('pets.create_pet', { user: 'u_2', input });
    const id = (errorOf(held) as unknown as { approval: { id: string } }).approval.id;
    const changed = petStore({ getPetPath: '/animals/{id}', extraOperation: true });
    changed.paths['/pets'].post.operationId = 'createPet';
    (changed.paths['/pets'].post as Record<string, unknown>)['x-gatehouse-scope'] = 'write';
    (changed.paths['/pets'].post as Record<string, unknown>).summary = 'Create a pet (changed)';
    const refreshed = await stack.request(stack.key, 'POST', '/v1/openapi-apps/pets/refresh', {
      body: { document: changed },
    });
    expect(refreshed.status).toBe(200);
    const before = received.filter((one) => one.method === 'POST').length;
    expect(
      (await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`)).status,
    ).toBe(200);
    const ran = await stack.run('pets.create_pet', { user: 'u_2', input });
    expect([ran.status, errorOf(ran).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(ran).message).toMatch(/create_pet.*changed its summary/);
    expect(received.filter((one) => one.method === 'POST').length).toBe(before);
    const version = (refreshed.body.data as { snapshot: { latest_version: number } }).snapshot
      .latest_version;
    await stack.request(stack.key, 'POST', '/v1/openapi-apps/pets/accept', { body: { version } });
  });

  it('grades by the operator’s override, and deletes the app', async () => {
    const patched = await stack.request(stack.key, 'PATCH', '/v1/openapi-apps/pets', {
      body: { grade_overrides: { list_pets: 'destructive' } },
    });
    expect(operationsOf(patched).find((one) => one.name === 'list_pets')).toMatchObject({
      grade: 'destructive',
      grade_source: 'override',
    });
    const denied = await stack.run('pets.list_pets', { user: 'u_1', input: {} });
    expect(errorOf(denied).code).toBe('denied_by_policy');
    const deleted = await stack.request(stack.key, 'DELETE', '/v1/openapi-apps/pets');
    expect(deleted.body).toEqual({ data: { app: 'pets', deleted: true } });
    const gone = await stack.run('pets.list_pets', { user: 'u_1', input: {} });
    expect(gone.status).toBe(404);
  });
});
