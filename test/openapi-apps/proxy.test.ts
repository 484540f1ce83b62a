// The proxy for an OpenAPI app: `/v1/proxy/<app>/<path>` reaches the app's pinned base URL,
// graded by its method and by the operations the request is, bounded by the rules naming them,
// and refused while such an operation is not callable by pinning. The matching and the policy
// floor are checked pure first; then through the call workflow (real Temporal and Postgres),
// with a recording server on loopback as the app.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { rawRequest } from '../support/raw-request.js';
import { enterCredential } from '../support/credential-form.js';
import { templateMatches } from '../../activities/openapi-registry/proxy-standing.js';
import { evaluatePolicy, type PolicyDocument } from '../../workflows/policy.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let stack: CallStack;
let upstream: http.Server;
let upstreamUrl: string;
const received: Received[] = [];
let stranger: TestKey;

/** A pet store with a delete, an admin endpoint a method grades too loosely, and a toy shop. */
function petStore(changes: { getPetSummary?: string; toys?: boolean } = {}) {
  const ok = { '200': { description: 'ok' } };
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1.0.0' },
    servers: [{ url: upstreamUrl }],
    paths: {
      '/pets': {
        get: { operationId: 'listPets', responses: ok },
        post: { operationId: 'createPet', responses: ok },
      },
      '/pets/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'getPet',
          summary: changes.getPetSummary ?? 'One pet',
          responses: ok,
        },
        delete: { operationId: 'deletePet', responses: ok },
      },
      '/admin/reset': { get: { operationId: 'reset', responses: ok } },
      ...(changes.toys
        ? {
            '/toys/{id}': {
              get: {
                operationId: 'getToy',
                parameters: [
                  { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
                ],
                responses: ok,
              },
            },
          }
        : {}),
    },
  };
}

function errorOf(answer: { body: Record<string, unknown> }): {
  code: string;
  message: string;
  approval?: { id: string };
} {
  const error = answer.body.error as { code: string; message: string } | undefined;
  if (!error) throw new Error(`expected an error, got ${JSON.stringify(answer.body)}`);
  return error;
}

/** `/v1/proxy/pets/<path>` as user u_1. */
function proxy(
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; key?: TestKey } = {},
): Promise<Answer> {
  return stack.request(options.key ?? stack.key, method, `/v1/proxy/pets/${path}`, {
    headers: {
      'service-user': 'u_1',
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { raw: options.body }),
  });
}

const ALLOW_ALL = { read: 'allow', write: 'allow', destructive: 'allow' };

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/teapot')) {
        res.writeHead(418, { 'content-type': 'text/plain', 'x-upstream': 'teapot' });
        res.end('short and stout');
        return;
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, {
        'content-type': 'application/json',
        'x-upstream': 'pets',
      });
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

beforeEach(async () => {
  await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
});

describe('matching a request to the operations (pure)', () => {
  it('takes a {param} as one non-empty segment, literals decoded and in any case', () => {
    expect(templateMatches('/pets/{id}', 'pets/1')).toBe(true);
    expect(templateMatches('/pets/{id}', 'PETS/1')).toBe(true);
    expect(templateMatches('/pets/{id}', 'p%65ts/1/')).toBe(true);
    expect(templateMatches('/pets/{id}.json', 'pets/1.JSON')).toBe(true);
    expect(templateMatches('/pets/{id}', 'pets')).toBe(false);
    expect(templateMatches('/pets/{id}', 'pets/1/toys')).toBe(false);
    expect(templateMatches('/pets/{id}', 'pet/1')).toBe(false);
    expect(templateMatches('/pets/{id}.json', 'pets/.json')).toBe(false);
  });

  it('bounds the proxy by the rules naming a matched action, unless one names <app>.proxy', () => {
    const policy = (rules: PolicyDocument['rules']): PolicyDocument => ({
      id: 'p',
      version: 1,
      agents: ['*'],
      defaults: { read: 'allow', write: 'allow', destructive: 'allow' },
      rules,
      approval: { requested_from: [], ttl_seconds: 60 },
    });
    const target = {
      kind: 'proxy' as const,
      app: 'pets',
      scope: 'read' as const,
      actions: [{ action: 'pets.get_pet', scope: 'write' as const }],
      matched: [{ action: 'pets.get_pet', scope: 'write' as const }],
    };
    const denied = evaluatePolicy(
      policy([{ action: 'pets.get_*', scope: 'write', decision: 'deny' }]),
      target,
    );
    expect(denied.decision).toBe('deny');
    expect(denied.matched).toContain('the request is pets.get_pet');
    // Unmatched, the same rule is of another scope than the proxy's: it does not bound it.
    expect(
      evaluatePolicy(policy([{ action: 'pets.get_*', decision: 'deny' }]), {
        ...target,
        matched: [],
      }).decision,
    ).toBe('allow');
    const lifted = evaluatePolicy(
      policy([
        { action: 'pets.get_pet', decision: 'deny' },
        { action: 'pets.proxy', decision: 'ask' },
      ]),
      target,
    );
    expect(lifted.decision).toBe('ask');
  });
});

/** An app whose users connect with an API key sent in the query. */
function keyedStore() {
  const ok = { '200': { description: 'ok' } };
  return {
    openapi: '3.0.3',
    info: { title: 'Keyed', version: '1.0.0' },
    servers: [{ url: upstreamUrl }],
    components: { securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'api_key' } } },
    paths: {
      '/secrets': { get: { operationId: 'getSecrets', security: [{ key: [] }], responses: ok } },
      '/open': { get: { operationId: 'getOpen', responses: ok } },
    },
  };
}

describe('the proxy to an OpenAPI app', () => {
  it('passes an allowed GET through to the pinned base URL: status, headers, body, query', async () => {
    const before = received.length;
    const answer = await proxy('GET', 'pets/7?limit=2&q=a%20b&flag', {
      headers: { 'x-client': 'kept' },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-upstream')).toBe('pets');
    expect(answer.body).toEqual({ method: 'GET', url: '/pets/7?limit=2&q=a%20b&flag', body: null });
    expect(received.length).toBe(before + 1);
    expect(received.at(-1)?.headers['x-client']).toBe('kept');
    expect(received.at(-1)?.headers.authorization).toBeUndefined();
    // An answer that is not JSON, with a status the proxy passes as it is.
    const teapot = await proxy('GET', 'teapot');
    expect(teapot.status).toBe(418);
    expect(teapot.headers.get('x-upstream')).toBe('teapot');
    expect(teapot.body).toEqual({ text: 'short and stout' });
  });

  it('holds a write, and sends it once when approved', async () => {
    const before = received.filter((one) => one.method === 'POST').length;
    const body = JSON.stringify({ name: 'Rex' });
    const held = await proxy('POST', 'pets', { body });
    expect([held.status, errorOf(held).code]).toEqual([403, 'approval_required']);
    expect(received.filter((one) => one.method === 'POST').length).toBe(before);
    const id = errorOf(held).approval?.id ?? '';
    const decided = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`);
    expect(decided.status).toBe(200);
    const sent = await proxy('POST', 'pets', { body });
    expect(sent.status).toBe(201);
    expect(sent.body).toEqual({ method: 'POST', url: '/pets', body });
    const again = await proxy('POST', 'pets', { body });
    expect(again.status).toBe(403);
    expect(received.filter((one) => one.method === 'POST').length).toBe(before + 1);
  });

  it('shows approvers the policy in force bounded by the operation, as the call itself is', async () => {
    // Everything allowed but creating a pet: POST /pets through the proxy is create_pet, held.
    await stack.setDefaults(ALLOW_ALL, {
      rules: [{ action: 'pets.create_pet', decision: 'ask' }],
    });
    const held = await proxy('POST', 'pets', { body: JSON.stringify({ name: 'Tom' }) });
    expect([held.status, errorOf(held).code]).toEqual([403, 'approval_required']);
    const id = errorOf(held).approval?.id ?? '';
    const shown = await stack.request(stack.approver, 'GET', `/v1/approvals/${id}`);
    expect(shown.body).toMatchObject({ policy_in_force: { decision: 'ask' } });
    const listed = await stack.request(stack.approver, 'GET', '/v1/approvals?status=pending');
    const inList = (listed.body.data as { id: string; policy_in_force: unknown }[]).find(
      (one) => one.id === id,
    );
    expect(inList?.policy_in_force).toMatchObject({ decision: 'ask' });
    const rejected = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/reject`);
    expect(rejected.status).toBe(200);
  });

  it('denies what a rule denies the operation, in every spelling, unless a rule names the proxy', async () => {
    await stack.setDefaults(ALLOW_ALL, {
      rules: [{ action: 'pets.delete_pet', decision: 'deny' }],
    });
    const before = received.length;
    for (const path of ['pets/1', 'PETS/1', 'pets/%31', '/pets//1', 'pets/1/']) {
      const denied = await proxy('DELETE', path);
      expect([path, denied.status, errorOf(denied).code]).toEqual([path, 403, 'denied_by_policy']);
      expect(errorOf(denied).message).toContain('the request is pets.delete_pet');
    }
    expect(received.length).toBe(before);
    // A request the document has no operation for is governed by its method: a PUT is a write
    // (allowed here); any DELETE meets the rules of the app's destructive operations, as the
    // proxy of a catalog app meets its actions'.
    const put = await proxy('PUT', 'pets/1', { body: '{}' });
    expect(put.status).toBe(200);
    expect(received.length).toBe(before + 1);
    const unmatched = await proxy('DELETE', 'pets');
    expect([unmatched.status, errorOf(unmatched).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(unmatched).message).toContain('at scope destructive');
    expect(received.length).toBe(before + 1);

    await stack.setDefaults(ALLOW_ALL, {
      rules: [
        { action: 'pets.delete_pet', decision: 'deny' },
        { action: 'pets.proxy', decision: 'allow' },
      ],
    });
    const lifted = await proxy('DELETE', 'pets/1');
    expect(lifted.status).toBe(200);
    expect(received.at(-1)).toMatchObject({ method: 'DELETE', url: '/pets/1' });
  });

  it("grades a GET by the operation's override: destructive through the proxy too", async () => {
    expect((await proxy('GET', 'admin/reset')).status).toBe(200);
    const patched = await stack.request(stack.key, 'PATCH', '/v1/openapi-apps/pets', {
      body: { grade_overrides: { reset: 'destructive' } },
    });
    expect(patched.status).toBe(200);
    const before = received.length;
    for (const path of ['admin/reset', 'ADMIN/Reset']) {
      const denied = await proxy('GET', path);
      expect([denied.status, errorOf(denied).code]).toEqual([403, 'denied_by_policy']);
      expect(errorOf(denied).message).toContain('defaults.destructive');
    }
    expect(received.length).toBe(before);
    await stack.request(stack.key, 'PATCH', '/v1/openapi-apps/pets', {
      body: { grade_overrides: {} },
    });
  });

  it('refuses an operation changed or added in a pending snapshot until it is accepted', async () => {
    const refreshed = await stack.request(stack.key, 'POST', '/v1/openapi-apps/pets/refresh', {
      body: { document: petStore({ getPetSummary: 'One pet, changed', toys: true }) },
    });
    expect(refreshed.status).toBe(200);
    const before = received.length;
    const changed = await proxy('GET', 'pets/1');
    expect([changed.status, errorOf(changed).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(changed).message).toMatch(/"get_pet".*changed its summary in snapshot v2/);
    const added = await proxy('GET', 'toys/1');
    expect([added.status, errorOf(added).code]).toEqual([403, 'denied_by_policy']);
    expect(errorOf(added).message).toMatch(/"get_toy".*new in snapshot v2/);
    expect(received.length).toBe(before);
    expect((await proxy('GET', 'pets')).status).toBe(200);

    const accepted = await stack.request(stack.key, 'POST', '/v1/openapi-apps/pets/accept', {
      body: { version: 2 },
    });
    expect(accepted.status).toBe(200);
    expect((await proxy('GET', 'pets/1')).body).toMatchObject({ url: '/pets/1' });
    expect((await proxy('GET', 'toys/1')).body).toMatchObject({ url: '/toys/1' });
  });

  it('is not found from another environment, and refuses escapes before sending anything', async () => {
    const before = received.length;
    const elsewhere = await proxy('GET', 'pets', { key: stranger });
    expect([elsewhere.status, errorOf(elsewhere).code]).toEqual([404, 'not_found']);
    for (const target of [
      '/v1/proxy/pets/pets/../admin/reset',
      '/v1/proxy/pets/%2e%2e/admin/reset',
      '/v1/proxy/pets/pets%2f..%2fadmin',
      '/v1/proxy/pets/pets/%2E/1',
    ]) {
      const answer = await rawRequest(stack.api.url, 'GET', target, {
        headers: { authorization: `Bearer ${stack.key.key}`, 'service-user': 'u_1' },
      });
      expect([target, answer.status]).toEqual([target, 400]);
    }
    expect(received.length).toBe(before);
  });

  it("sends the user's credential as the operations it is need it, and only the key's pair", async () => {
    const registered = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
      body: { id: 'keyed', name: 'Keyed', document: keyedStore() },
    });
    expect(registered.status).toBe(200);
    const viaProxy = (path: string) =>
      stack.request(stack.key, 'GET', `/v1/proxy/keyed/${path}`, {
        headers: { 'service-user': 'u_key' },
      });
    const before = received.length;
    const unconnected = await viaProxy('secrets');
    expect(errorOf(unconnected).code).toBe('connection_required');
    expect(received.length).toBe(before);

    const key = `pk_live_${randomBytes(18).toString('base64url')}`;
    const link = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: 'u_key', app: 'keyed', redirect_url: 'https://product.example/done' },
    });
    expect(link.status).toBe(201);
    expect(await enterCredential(link.body.url as string, { secret: key })).not.toBe('');

    // The caller's own api_key is replaced; the rest of the query goes as written.
    const secrets = await viaProxy('secrets?x=%7E&api_key=mine&y');
    expect(secrets.status).toBe(200);
    expect(received.at(-1)?.url).toBe(`/secrets?x=%7E&y&api_key=${key}`);
    // An operation that takes no credential goes without it.
    expect((await viaProxy('open?x=1')).status).toBe(200);
    expect(received.at(-1)?.url).toBe('/open?x=1');
    // An endpoint the document lacks: sent with it, the user being connected.
    expect((await viaProxy('elsewhere')).status).toBe(200);
    expect(received.at(-1)?.url).toBe(`/elsewhere?api_key=${key}`);

    const [audit] = await stack.db.sql<{ text: string | null }[]>`
      select string_agg(row_to_json(a)::text, ' ') as text from audit_events a
      where action = 'keyed.proxy'`;
    expect(audit?.text).toContain('"path": "secrets"');
    expect(audit?.text).not.toContain(key);
  });

  it('reaches only the allowed operations of an app with an allow-list', async () => {
    const patched = await stack.request(stack.key, 'PATCH', '/v1/openapi-apps/keyed', {
      body: { operation_allowlist: ['get_open'] },
    });
    expect(patched.status).toBe(200);
    const viaProxy = (path: string) =>
      stack.request(stack.key, 'GET', `/v1/proxy/keyed/${path}`, {
        headers: { 'service-user': 'u_key' },
      });
    const before = received.length;
    const outside = await viaProxy('secrets');
    expect(errorOf(outside).code).toBe('denied_by_policy');
    expect(errorOf(outside).message).toMatch(
      /"get_secrets".*outside the app's operation allow-list/,
    );
    const unmatched = await viaProxy('elsewhere');
    expect(errorOf(unmatched).code).toBe('denied_by_policy');
    expect(errorOf(unmatched).message).toContain('matches none of its operations');
    expect(received.length).toBe(before);
    expect((await viaProxy('open')).status).toBe(200);
  });
});
