import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { markConnectionExpired } from '../../activities/db/connections.js';
import { gzipSync } from 'node:zlib';
import type { ApiRequestRecord } from '../../infra/demo-app/last-request.js';
import { rawRequest } from '../support/raw-request.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { historyText } from '../support/workflow-history.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

let stack: CallStack;
let readOnly: TestKey;
/** Every credential of this file: none may reach a log line, an audit row or a history. */
const secrets: string[] = [];

const DEFAULTS = { read: 'allow', write: 'ask', destructive: 'deny' };
const ALLOW_ALL = { read: 'allow', write: 'allow', destructive: 'allow' };
const ALLOW_ACME_WRITES = { rules: [{ app: 'acme', scope: 'write', decision: 'allow' }] };

interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  upstream_status?: number;
  limit_bytes?: number;
  issues?: { path: string; message: string }[];
  approval?: { id: string; status: string; requested_from: string[]; expires_at: string };
}

interface Task {
  id: string;
  title: string;
  notes: string | null;
  status: 'open' | 'done';
}

interface AuditEvent {
  id: string;
  action: string;
  scope: string;
  decision: string;
  reason: string | null;
  user: string;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
}

function errorOf(answer: Answer): ErrorBody {
  const error = answer.body.error as ErrorBody | undefined;
  if (!error || typeof error !== 'object') {
    throw new Error(
      `expected an error, got ${String(answer.status)} ${JSON.stringify(answer.body)}`,
    );
  }
  return error;
}

async function connect(externalId: string): Promise<SeededConnection> {
  const connection = await stack.connect(externalId);
  secrets.push(connection.accessToken, connection.refreshToken);
  return connection;
}

/** Through Gatehouse: `/v1/proxy/acme/<path>` for the user (no Service-User when null). */
function proxy(
  user: string | null,
  method: string,
  path: string,
  options: { raw?: string | Buffer; headers?: Record<string, string>; key?: TestKey } = {},
): Promise<Answer> {
  return stack.request(options.key ?? stack.key, method, `/v1/proxy/acme/${path}`, {
    headers: { ...(user === null ? {} : { 'service-user': user }), ...options.headers },
    ...(options.raw === undefined ? {} : { raw: options.raw }),
  });
}

function json(value: unknown): { raw: string; headers: Record<string, string> } {
  return { raw: JSON.stringify(value), headers: { 'content-type': 'application/json' } };
}

/** Straight to the demo app with the user's own access token, bypassing Gatehouse. */
async function direct(
  connection: SeededConnection,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<unknown>> {
  const response = await fetch(`${stack.acme.demo.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${connection.accessToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    parsed = { text };
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

async function directTasks(connection: SeededConnection): Promise<Task[]> {
  const answer = await direct(connection, 'GET', '/tasks');
  expect(answer.status).toBe(200);
  return (answer.body as { tasks: Task[] }).tasks;
}

async function createDirect(connection: SeededConnection, title: string): Promise<Task> {
  const answer = await direct(connection, 'POST', '/tasks', { title });
  expect(answer.status).toBe(201);
  return answer.body as Task;
}

/** The user's audit events in full, through the audit API. */
async function auditOf(user: string): Promise<AuditEvent[]> {
  const list = await stack.request(stack.key, 'GET', `/v1/audit?user=${user}`);
  expect(list.status).toBe(200);
  const events: AuditEvent[] = [];
  for (const item of list.body.data as { id: string }[]) {
    const event = await stack.request(stack.key, 'GET', `/v1/audit/${item.id}`);
    expect(event.status).toBe(200);
    events.push(event.body as unknown as AuditEvent);
  }
  return events;
}

function apiRequests(): number {
  return stack.acme.demo.stats().apiRequests;
}

/** What the demo app last received on its resource API, as it saw it. */
async function lastAppRequest(): Promise<ApiRequestRecord> {
  const response = await fetch(`${stack.acme.demo.url}/__admin/last-request`);
  expect(response.status).toBe(200);
  const seen = (await response.json()) as ApiRequestRecord | null;
  if (seen === null) throw new Error('the demo app has not received an API request');
  return seen;
}

const METHOD_OVERRIDES = ['x-http-method-override', 'x-http-method', 'x-method-override'];

/** A proxy request sent exactly as written (see rawRequest), as the test agent. */
async function rawProxy(
  method: string,
  target: string,
  options: { body?: string | Buffer; user?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { body } = options;
  const answer = await rawRequest(stack.api.url, method, target, {
    headers: {
      authorization: `Bearer ${stack.key.key}`,
      'service-user': options.user ?? 'u_proxy_read',
      ...(body === undefined
        ? {}
        : {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
          }),
      ...options.headers,
    },
    ...(body === undefined ? {} : { body }),
  });
  return { status: answer.status, body: answer.body };
}

const started = stopsAfterAll();

beforeAll(async () => {
  // An upstream timeout short enough that `upstream_timeout` is provable without a long wait,
  // and long enough that the demo app (in this process) answers every other call before it on
  // a loaded machine too: 1.5 s was not.
  stack = started.add(await startCallStack({ env: { UPSTREAM_TIMEOUT_MS: '5000' } }));
  readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
  secrets.push(stack.key.key, readOnly.key);
});

afterEach(async () => {
  stack.acme.demo.faults.reset();
  await stack.setDefaults(DEFAULTS);
});

describe('an allowed read', () => {
  it("passes the app's status, headers and JSON through, with the query unchanged", async () => {
    const user = await connect('u_proxy_read');
    const open = await createDirect(user, 'still open');
    const done = await createDirect(user, 'already done');
    expect((await direct(user, 'PATCH', `/tasks/${done.id}`, { status: 'done' })).status).toBe(200);

    for (const [status, task] of [
      ['open', open],
      ['done', done],
    ] as const) {
      const proxied = await proxy('u_proxy_read', 'GET', `tasks?status=${status}`);
      const own = await direct(user, 'GET', `/tasks?status=${status}`);
      expect(proxied.status).toBe(200);
      expect(own.status).toBe(200);
      // The app's own shape, not wrapped in {ok, data}.
      expect(proxied.body).toEqual(own.body);
      expect(proxied.headers.get('content-type')).toBe(own.headers.get('content-type'));
      expect((proxied.body.tasks as Task[]).map((t) => t.id)).toEqual([task.id]);
    }

    // A query the app refuses proves it arrived as sent; the app's 422 is data, not an envelope.
    const refused = await proxy('u_proxy_read', 'GET', 'tasks?status=sleeping');
    const ownRefused = await direct(user, 'GET', '/tasks?status=sleeping');
    expect(ownRefused.status).toBe(422);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(ownRefused.body);
    expect(refused.body).toMatchObject({ error: 'validation_failed' });

    const audit = await auditOf('u_proxy_read');
    expect(audit.find((event) => event.request.query === 'status=open')).toMatchObject({
      action: 'acme.proxy',
      scope: 'read',
      decision: 'allowed',
      user: 'u_proxy_read',
      request: { method: 'GET', path: 'tasks', query: 'status=open', body_bytes: 0 },
      response: { status: 200 },
    });
    expect(audit.find((event) => event.request.query === 'status=sleeping')).toMatchObject({
      decision: 'allowed',
      response: { status: 422 },
    });
  });

  it("passes the app's own 404 through as data, and the path reaches it still encoded", async () => {
    const user = await connect('u_proxy_path');
    const missing = await proxy('u_proxy_path', 'GET', 'tasks/t%3Ax');
    expect((await lastAppRequest()).path).toBe('/tasks/t%3Ax');
    const own = await direct(user, 'GET', '/tasks/t%3Ax');
    expect(own.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(own.body);
    expect(missing.body).toEqual({ error: 'not_found' });

    const audit = await auditOf('u_proxy_path');
    expect(audit.map((event) => event.request.path)).toEqual(['tasks/t%3Ax']);
  });
});

describe('graded by method', () => {
  it('holds a POST for approval without reaching the app, then runs it once approved', async () => {
    const user = await connect('u_proxy_write');
    const title = `approve me ${String(Date.now())}`;
    const body = json({ title });
    const before = apiRequests();

    const held = await proxy('u_proxy_write', 'POST', 'tasks', body);
    expect(held.status).toBe(403);
    const error = errorOf(held);
    expect(error).toMatchObject({ code: 'approval_required', retryable: true });
    expect(error.approval).toEqual({
      id: expect.any(String),
      status: 'pending',
      requested_from: expect.any(Array),
      expires_at: expect.any(String),
    });
    expect(apiRequests()).toBe(before);
    expect(await directTasks(user)).toEqual([]);

    // The same call again meets the same approval.
    const again = await proxy('u_proxy_write', 'POST', 'tasks', body);
    expect(errorOf(again).approval?.id).toBe(error.approval?.id);

    const approvalId = error.approval?.id ?? '';
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.status).toBe(200);

    const ran = await proxy('u_proxy_write', 'POST', 'tasks', body);
    expect(ran.status).toBe(201);
    const created = ran.body as unknown as Task;
    expect(created).toMatchObject({ title, status: 'open', notes: null });
    expect(ran.headers.get('location')).toBe(`/tasks/${created.id}`);
    expect((await directTasks(user)).map((task) => task.id)).toEqual([created.id]);

    // The approval is consumed: the next identical call asks anew and creates nothing.
    const fresh = await proxy('u_proxy_write', 'POST', 'tasks', body);
    expect(errorOf(fresh).code).toBe('approval_required');
    expect(errorOf(fresh).approval?.id).not.toBe(approvalId);
    expect(await directTasks(user)).toHaveLength(1);
  });

  it('denies a DELETE under the default policy; the app keeps the task', async () => {
    const user = await connect('u_proxy_delete');
    const task = await createDirect(user, 'keep me');
    const before = apiRequests();
    const answer = await proxy('u_proxy_delete', 'DELETE', `tasks/${task.id}`);
    expect(answer.status).toBe(403);
    expect(errorOf(answer)).toMatchObject({ code: 'denied_by_policy', retryable: false });
    expect(apiRequests()).toBe(before);
    expect((await direct(user, 'GET', `/tasks/${task.id}`)).status).toBe(200);
  });

  it('lets PATCH and DELETE reach the app when the policy allows them', async () => {
    const user = await connect('u_proxy_allowed');
    const task = await createDirect(user, 'change me');
    await stack.setDefaults(ALLOW_ALL);

    const patched = await proxy(
      'u_proxy_allowed',
      'PATCH',
      `tasks/${task.id}`,
      json({ status: 'done' }),
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: task.id, title: 'change me', status: 'done' });

    const deleted = await proxy('u_proxy_allowed', 'DELETE', `tasks/${task.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toEqual({ text: '' });
    expect((await direct(user, 'GET', `/tasks/${task.id}`)).status).toBe(404);
  });

  it('lets an app+scope rule decide a proxy call over the defaults', async () => {
    const user = await connect('u_proxy_rule');
    await stack.setDefaults(DEFAULTS, ALLOW_ACME_WRITES);
    const answer = await proxy('u_proxy_rule', 'POST', 'tasks', json({ title: 'by rule' }));
    expect(answer.status).toBe(201);
    expect((await directTasks(user)).map((task) => task.title)).toEqual(['by rule']);
  });

  it('audits each call as acme.proxy with its scope, method and path', async () => {
    const user = await connect('u_proxy_audit');
    const task = await createDirect(user, 'audited');
    const body = json({ title: 'audited write' });
    expect((await proxy('u_proxy_audit', 'GET', `tasks/${task.id}`)).status).toBe(200);
    expect((await proxy('u_proxy_audit', 'POST', 'tasks', body)).status).toBe(403);
    expect((await proxy('u_proxy_audit', 'PUT', `tasks/${task.id}`, json({}))).status).toBe(403);
    expect((await proxy('u_proxy_audit', 'DELETE', `tasks/${task.id}`)).status).toBe(403);

    const audit = await auditOf('u_proxy_audit');
    const summary = audit
      .map((event) => ({
        action: event.action,
        scope: event.scope,
        decision: event.decision,
        method: event.request.method,
        path: event.request.path,
      }))
      .sort((a, b) => String(a.method).localeCompare(String(b.method)));
    const path = `tasks/${task.id}`;
    expect(summary).toEqual([
      { action: 'acme.proxy', scope: 'destructive', decision: 'denied', method: 'DELETE', path },
      { action: 'acme.proxy', scope: 'read', decision: 'allowed', method: 'GET', path },
      { action: 'acme.proxy', scope: 'write', decision: 'blocked', method: 'POST', path: 'tasks' },
      { action: 'acme.proxy', scope: 'write', decision: 'blocked', method: 'PUT', path },
    ]);
    const post = audit.find((event) => event.request.method === 'POST');
    expect(post?.request).toMatchObject({ query: null, body_bytes: Buffer.byteLength(body.raw) });
  });
});

describe("bounded by the rules of the app's actions", () => {
  it('denies DELETE where acme.delete_task is denied, unless a rule names acme.proxy', async () => {
    const user = await connect('u_proxy_floor');
    const task = await createDirect(user, 'guarded');
    const denyDelete = { action: 'acme.delete_task', decision: 'deny' };
    await stack.setDefaults(ALLOW_ALL, { rules: [denyDelete] });

    const before = apiRequests();
    const denied = await proxy('u_proxy_floor', 'DELETE', `tasks/${task.id}`);
    expect(denied.status).toBe(403);
    expect(errorOf(denied)).toMatchObject({ code: 'denied_by_policy', retryable: false });
    expect(apiRequests()).toBe(before);
    expect((await direct(user, 'GET', `/tasks/${task.id}`)).status).toBe(200);
    // Reads and writes are not bounded by a destructive action's rule.
    expect((await proxy('u_proxy_floor', 'GET', `tasks/${task.id}`)).status).toBe(200);

    const allowProxyDeletes = { action: 'acme.proxy', scope: 'destructive', decision: 'allow' };
    await stack.setDefaults(ALLOW_ALL, { rules: [denyDelete, allowProxyDeletes] });
    const deleted = await proxy('u_proxy_floor', 'DELETE', `tasks/${task.id}`);
    expect(deleted.status).toBe(204);
    expect((await direct(user, 'GET', `/tasks/${task.id}`)).status).toBe(404);

    const audit = await auditOf('u_proxy_floor');
    const deletes = audit.filter((event) => event.request.method === 'DELETE');
    expect(deletes.map((event) => [event.decision, event.reason]).sort()).toEqual([
      ['allowed', expect.any(String)],
      [
        'denied',
        expect.stringContaining(
          'rule (action acme.delete_task) applied to the proxy at scope destructive',
        ),
      ],
    ]);
  });

  it('holds a POST where acme.create_task asks; the approval names that rule', async () => {
    await connect('u_proxy_floor_ask');
    await stack.setDefaults(ALLOW_ALL, {
      rules: [{ action: 'acme.create_task', decision: 'ask' }],
    });
    const before = apiRequests();
    const held = await proxy('u_proxy_floor_ask', 'POST', 'tasks', json({ title: 'asked' }));
    expect(held.status).toBe(403);
    expect(errorOf(held).code).toBe('approval_required');
    expect(apiRequests()).toBe(before);
    const approvalId = errorOf(held).approval?.id ?? '';
    const view = await stack.request(stack.approver, 'GET', `/v1/approvals/${approvalId}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      action: 'acme.proxy',
      scope: 'write',
      policy: {
        id: 'default',
        rule: 'rule (action acme.create_task) applied to the proxy at scope write',
      },
    });
  });
});

describe('method-override headers', () => {
  it('never reach the app: it acts on the method the policy graded', async () => {
    const user = await connect('u_proxy_override');
    const task = await createDirect(user, 'not to be deleted');
    await stack.setDefaults(DEFAULTS, ALLOW_ACME_WRITES);
    const overrides = Object.fromEntries(METHOD_OVERRIDES.map((name) => [name, 'DELETE']));

    const read = await proxy('u_proxy_override', 'GET', `tasks/${task.id}`, {
      headers: { ...overrides, 'x-custom': 'kept' },
    });
    expect(read.status).toBe(200);
    const readSeen = await lastAppRequest();
    expect(readSeen).toMatchObject({
      method: 'GET',
      path: `/tasks/${task.id}`,
      headers: { 'x-custom': 'kept' },
    });
    for (const name of METHOD_OVERRIDES) expect(readSeen.headers).not.toHaveProperty(name);

    const body = json({ title: 'posted, not deleted' });
    const posted = await proxy('u_proxy_override', 'POST', 'tasks', {
      raw: body.raw,
      headers: { ...body.headers, ...overrides },
    });
    expect(posted.status).toBe(201);
    const postSeen = await lastAppRequest();
    expect(postSeen).toMatchObject({ method: 'POST', path: '/tasks' });
    for (const name of METHOD_OVERRIDES) expect(postSeen.headers).not.toHaveProperty(name);

    expect((await directTasks(user)).map((t) => t.title).sort()).toEqual([
      'not to be deleted',
      'posted, not deleted',
    ]);
    const audit = await auditOf('u_proxy_override');
    expect(audit.map((event) => [event.request.method, event.scope]).sort()).toEqual([
      ['GET', 'read'],
      ['POST', 'write'],
    ]);
  });
});

describe('hop-by-hop request headers and encoded bodies', () => {
  it('does not forward headers the caller names in Connection or Proxy-Connection', async () => {
    await connect('u_proxy_hop');
    const answer = await rawProxy('GET', '/v1/proxy/acme/tasks', {
      user: 'u_proxy_hop',
      headers: {
        connection: 'keep-alive, X-Hop-One',
        'proxy-connection': 'X-Hop-Two',
        'x-hop-one': 'secret-for-this-hop',
        'x-hop-two': 'also-this-hop',
        'x-end-to-end': 'kept',
      },
    });
    expect(answer.status).toBe(200);
    const seen = await lastAppRequest();
    expect(seen.headers).toMatchObject({ 'x-end-to-end': 'kept' });
    for (const name of ['x-hop-one', 'x-hop-two', 'proxy-connection']) {
      expect(seen.headers).not.toHaveProperty(name);
    }
  });

  it('passes a compressed body on decoded, without its Content-Encoding', async () => {
    await connect('u_proxy_gzip');
    await stack.setDefaults(DEFAULTS, ALLOW_ACME_WRITES);
    const body = gzipSync(JSON.stringify({ title: 'sent compressed' }));
    const answer = await rawProxy('POST', '/v1/proxy/acme/tasks', {
      user: 'u_proxy_gzip',
      body,
      headers: { 'content-encoding': 'gzip', 'content-length': String(body.length) },
    });
    // Decoded by Gatehouse but still labelled gzip, the app could not read it (400).
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ title: 'sent compressed' });
    expect((await lastAppRequest()).headers).not.toHaveProperty('content-encoding');
  });
});

describe('an approval of a held proxy call', () => {
  it('shows the request as it will be sent: method, path, query, headers and body', async () => {
    await connect('u_proxy_shown');
    const raw = JSON.stringify({ title: 'café, shown to the approver' });
    const held = await proxy('u_proxy_shown', 'POST', 'tasks?source=agent&x=%2F', {
      raw,
      headers: { 'content-type': 'application/json', 'x-custom': 'shown' },
    });
    expect(errorOf(held).code).toBe('approval_required');
    const approvalId = errorOf(held).approval?.id ?? '';

    const view = await stack.request(stack.approver, 'GET', `/v1/approvals/${approvalId}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      id: approvalId,
      status: 'pending',
      action: 'acme.proxy',
      scope: 'write',
      agent_id: 'test-agent',
      user: 'u_proxy_shown',
    });
    const request = view.body.request as Record<string, unknown>;
    expect(request).toMatchObject({
      action: 'acme.proxy',
      user: 'u_proxy_shown',
      via: 'api',
      method: 'POST',
      path: 'tasks',
      query: 'source=agent&x=%2F',
      headers: { 'content-type': 'application/json', 'x-custom': 'shown' },
      body: {
        bytes: Buffer.byteLength(raw),
        sha256: createHash('sha256').update(raw).digest('hex'),
        encoding: 'utf8',
        content: raw,
        truncated: false,
      },
    });
    // Ours, never forwarded, so never shown: credentials and Gatehouse's own headers.
    const shownHeaders = Object.keys(request.headers as Record<string, unknown>);
    for (const name of ['authorization', 'service-user', 'host', 'content-length']) {
      expect(shownHeaders).not.toContain(name);
    }
  });

  it('runs only the request it showed: other forwarded headers are another call', async () => {
    const user = await connect('u_proxy_identity');
    const body = json({ title: 'exactly as approved' });
    const asApproved = { raw: body.raw, headers: { ...body.headers, 'x-custom': 'a' } };
    const other = { raw: body.raw, headers: { ...body.headers, 'x-custom': 'b' } };

    const held = await proxy('u_proxy_identity', 'POST', 'tasks', asApproved);
    expect(errorOf(held).code).toBe('approval_required');
    const approvalId = errorOf(held).approval?.id ?? '';
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.status).toBe(200);

    const before = apiRequests();
    const changed = await proxy('u_proxy_identity', 'POST', 'tasks', other);
    expect(changed.status).toBe(403);
    expect(errorOf(changed)).toMatchObject({
      code: 'approval_required',
      approval: { status: 'pending' },
    });
    expect(errorOf(changed).approval?.id).not.toBe(approvalId);
    expect(apiRequests()).toBe(before);
    expect(await directTasks(user)).toEqual([]);

    const ran = await proxy('u_proxy_identity', 'POST', 'tasks', asApproved);
    expect(ran.status).toBe(201);
    expect((await lastAppRequest()).headers).toMatchObject({ 'x-custom': 'a' });
    const again = await proxy('u_proxy_identity', 'POST', 'tasks', asApproved);
    expect(errorOf(again).code).toBe('approval_required');
    expect(errorOf(again).approval?.id).not.toBe(approvalId);
    // Ran once: the approved request, and neither the other one nor a second time.
    expect((await directTasks(user)).map((task) => task.title)).toEqual(['exactly as approved']);
  });
});

describe('stopped before the app', () => {
  it('requires Service-User, naming the header', async () => {
    const answer = await proxy(null, 'GET', 'tasks');
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.issues?.map((issue) => issue.path)).toContain('service-user');
  });

  it('answers 404 for an unknown app', async () => {
    const answer = await stack.request(stack.key, 'GET', '/v1/proxy/nope/tasks', {
      headers: { 'service-user': 'u_proxy_read' },
    });
    expect(answer.status).toBe(404);
    expect(errorOf(answer).code).toBe('not_found');
  });

  it('answers 404 for an app segment with a malformed escape', async () => {
    const answer = await rawProxy('GET', '/v1/proxy/%zz/tasks');
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'not_found' });
  });

  // The request to the app goes through a URL parser that would rewrite the first six: the app
  // would get another path than the caller sent and audit records (here `/me` instead of a task).
  // Apps disagree on whether an encoded slash splits a segment, and the rest are no path at all.
  it.each([
    'tasks/../me',
    'tasks/%2E%2e/me',
    'tasks/.%2e/me',
    './me',
    'tasks\\..\\me',
    'me#x',
    'tasks/..%2Fme',
    'tasks%2Fx',
    'tasks%00',
    'tasks%zz',
    '%C0%AFme',
  ])('refuses the path %s, which the app could not be sent as policy judges it', async (path) => {
    const before = apiRequests();
    const answer = await rawProxy('GET', `/v1/proxy/acme/${path}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'path', message: expect.any(String) }],
    });
    expect(apiRequests()).toBe(before);
  });

  it('accepts an encoded dot inside a segment, and sends it as a dot', async () => {
    const answer = await rawProxy('GET', '/v1/proxy/acme/tasks/a%2Eb');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: 'not_found' });
    expect((await lastAppRequest()).path).toBe('/tasks/a.b');
  });

  it('refuses a GET with a body, which could not be sent to the app', async () => {
    const before = apiRequests();
    const answer = await rawProxy('GET', '/v1/proxy/acme/tasks', { body: '{"a":1}' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'body', message: expect.any(String) }],
    });
    expect(apiRequests()).toBe(before);
  });

  it('refuses a read-only key, even for a GET', async () => {
    const answer = await proxy('u_proxy_read', 'GET', 'tasks', { key: readOnly });
    expect(answer.status).toBe(403);
    expect(errorOf(answer).code).toBe('insufficient_access');
  });

  it('answers connection_required for a user with no connection', async () => {
    const before = apiRequests();
    const answer = await proxy('u_proxy_nobody', 'GET', 'tasks');
    expect(answer.status).toBe(409);
    expect(errorOf(answer)).toMatchObject({ code: 'connection_required', retryable: false });
    expect(apiRequests()).toBe(before);
    expect(await auditOf('u_proxy_nobody')).toMatchObject([
      {
        action: 'acme.proxy',
        scope: 'read',
        decision: 'failed',
        reason: 'connection_required',
        response: null,
      },
    ]);
  });

  it('answers connection_expired with a reconnect URL, without reaching the app', async () => {
    const user = await connect('u_proxy_expired');
    await markConnectionExpired(stack.db.sql, user.connection.id);
    const before = apiRequests();
    const answer = await proxy('u_proxy_expired', 'GET', 'tasks');
    expect(answer.status).toBe(409);
    const error = errorOf(answer) as { code: string; reconnect_url?: string };
    expect(error.code).toBe('connection_expired');
    expect(error.reconnect_url).toMatch(new RegExp(`^${stack.config.api.publicUrl}/connect/`));
    expect(apiRequests()).toBe(before);
  });

  it('refuses a body above BODY_LIMIT_BYTES with 413 payload_too_large', async () => {
    await connect('u_proxy_big');
    await stack.setDefaults(ALLOW_ALL);
    const limit = stack.config.api.bodyLimitBytes;
    const before = apiRequests();
    const answer = await proxy('u_proxy_big', 'POST', 'tasks', {
      raw: JSON.stringify({ title: 'big', notes: 'x'.repeat(limit) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(413);
    expect(errorOf(answer)).toMatchObject({ code: 'payload_too_large', limit_bytes: limit });
    expect(apiRequests()).toBe(before);
  });
});

describe("the app's own failures", () => {
  beforeAll(async () => {
    await connect('u_proxy_faults');
  });

  it.each([
    ['rate_limit', 429, 'upstream_rate_limited', true, 429],
    ['bad_request', 400, 'upstream_invalid_request', false, 400],
    ['unavailable', 503, 'upstream_unavailable', true, 503],
    // Our status is the code's; the app's own is upstream_status.
    ['bad_gateway', 503, 'upstream_unavailable', true, 502],
    ['gateway_timeout', 504, 'upstream_timeout', true, 504],
  ] as const)('%s → %i %s', async (mode, status, code, retryable, upstreamStatus) => {
    stack.acme.demo.faults.set({ mode, retryAfterSeconds: 7, times: 1 });
    const answer = await proxy('u_proxy_faults', 'GET', 'tasks');
    expect(answer.status).toBe(status);
    expect(errorOf(answer)).toMatchObject({ code, retryable, upstream_status: upstreamStatus });
    if (mode === 'rate_limit') expect(answer.headers.get('retry-after')).toBe('7');
  });

  it('a slow app → 504 upstream_timeout after one wait; a write says it may have happened', async () => {
    await stack.setDefaults(ALLOW_ALL);
    stack.acme.demo.faults.set({ mode: 'slow', delayMs: 20_000, times: 5 });
    const before = apiRequests();
    const read = await proxy('u_proxy_faults', 'GET', 'tasks');
    expect(read.status).toBe(504);
    expect(errorOf(read)).toMatchObject({
      code: 'upstream_timeout',
      retryable: true,
      upstream_status: 504,
    });
    // UPSTREAM_TIMEOUT_MS is the caller's whole wait: a timed-out read is not tried again.
    expect(apiRequests() - before).toBe(1);
    expect(errorOf(read)).not.toHaveProperty('write_may_have_happened');

    const beforeWrite = apiRequests();
    const write = await proxy('u_proxy_faults', 'POST', 'tasks', json({ title: 'slow write' }));
    expect(write.status).toBe(504);
    expect(errorOf(write)).toMatchObject({
      code: 'upstream_timeout',
      write_may_have_happened: true,
    });
    expect(apiRequests() - beforeWrite).toBe(1);
  });

  it('audits each failure as failed, with the code as the reason', async () => {
    const audit = await auditOf('u_proxy_faults');
    expect(
      audit.map((event) => [event.request.method, event.decision, event.reason]).sort(),
    ).toEqual([
      ['GET', 'failed', 'upstream_invalid_request'],
      ['GET', 'failed', 'upstream_rate_limited'],
      ['GET', 'failed', 'upstream_timeout'],
      ['GET', 'failed', 'upstream_timeout'],
      ['GET', 'failed', 'upstream_unavailable'],
      ['GET', 'failed', 'upstream_unavailable'],
      ['POST', 'failed', 'upstream_timeout'],
    ]);
    expect(audit.find((event) => event.reason === 'upstream_rate_limited')?.response).toEqual({
      error: 'upstream_rate_limited',
      upstream_status: 429,
    });
  });
});

describe('a token the app no longer knows', () => {
  it('is refreshed once and the request sent once more', async () => {
    const user = await connect('u_proxy_401');
    await stack.forgetAccessToken(user);
    const before = stack.acme.demo.stats();
    const answer = await proxy('u_proxy_401', 'GET', 'tasks');
    expect(answer.status).toBe(200);
    const after = stack.acme.demo.stats();
    expect(after.tokenRequests.refresh_token).toBe(before.tokenRequests.refresh_token + 1);
    expect(after.apiRequests - before.apiRequests).toBe(2);
  });
});

describe('the request the app receives', () => {
  it("is the raw body byte for byte with its content type, and the user's token", async () => {
    const user = await connect('u_proxy_raw');
    await stack.setDefaults(DEFAULTS, ALLOW_ACME_WRITES);
    // Key order, whitespace and escapes that a re-serialisation would change.
    const raw = '{\n  "notes" :"n\\u00e9e",\t"title":   "caf\\u00e9 \\ud83d\\ude00 \\"q\\""  }\n';
    const created = await proxy('u_proxy_raw', 'POST', 'tasks', {
      raw,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'café 😀 "q"', notes: 'née' });
    // The task is the user's own: the app saw the user's token, not the caller's key.
    expect((await directTasks(user)).map((task) => task.title)).toEqual(['café 😀 "q"']);

    // The same bytes as text/plain: the app does not read them as JSON, so the content type
    // went through as the caller sent it (and the app's 422 came back as data).
    const plain = await proxy('u_proxy_raw', 'POST', 'tasks', {
      raw,
      headers: { 'content-type': 'text/plain' },
    });
    expect(plain.status).toBe(422);
    expect(plain.body).toMatchObject({ error: 'validation_failed' });
    expect(await directTasks(user)).toHaveLength(1);

    const audit = await auditOf('u_proxy_raw');
    const posts = audit.filter((event) => event.request.method === 'POST');
    expect(posts.map((event) => event.request.body_bytes)).toEqual([
      Buffer.byteLength(raw),
      Buffer.byteLength(raw),
    ]);
  });

  it('never carries a token into a log line, an audit row or a workflow history', async () => {
    const rows = await stack.db.sql`select * from audit_events`;
    expect(rows.length).toBeGreaterThan(0);
    const auditText = JSON.stringify(rows);
    expect(auditText).toContain('acme.proxy');
    expect(stack.api.logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(auditText).not.toContain(secret);
      for (const line of stack.api.logs) expect(line).not.toContain(secret);
    }

    // The proxied request (headers, body) travels in the workflow's start argument. Both POSTs
    // above carry the same bytes, so they are one call identity: two runs of one workflow id.
    const { temporal } = stack.api;
    // Visibility is eventually consistent.
    const runs = await eventually(
      'both runs listed',
      async () => {
        const listed: string[] = [];
        for await (const execution of temporal.workflow.list({
          query: `WorkflowType = 'governedCall' AND GatehouseAction = 'acme.proxy' AND GatehouseUser = 'u_proxy_raw'`,
        })) {
          listed.push(execution.workflowId);
        }
        return listed.length >= 2 ? listed : null;
      },
      250,
    );
    expect(runs).toHaveLength(2);
    const ids = new Set(runs);
    for (const id of ids) {
      const text = await historyText(temporal, id);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });
});
