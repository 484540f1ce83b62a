import { beforeAll, describe, expect, it } from '@jest/globals';
import { rawRequest } from '../support/raw-request.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Every call is recorded in the audit log, the ones the API refuses before they run too:
 * each refusal is one `denied` audit row with its reason, and nothing reaches the app.
 */
let stack: CallStack;
let readOnly: TestKey;

const USER = 'u_refused';

interface AuditEvent {
  id: string;
  action: string;
  scope: string | null;
  decision: string;
  reason: string | null;
  agent_id: string;
  user: string | null;
  via: string;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
  policy: unknown;
  trace_id: string;
}

interface Sent {
  status: number;
  traceId: string;
  body: Record<string, unknown>;
}

/** Sends exactly these bytes (fetch would resolve `..` and drop `#` before Gatehouse saw them). */
async function send(
  method: string,
  path: string,
  options: { key?: string | null; headers?: Record<string, string>; body?: string } = {},
): Promise<Sent> {
  const key = options.key === undefined ? stack.key.key : options.key;
  const answer = await rawRequest(stack.api.url, method, path, {
    headers: {
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...(options.body === undefined
        ? {}
        : {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(options.body)),
          }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const traceId = answer.headers['x-trace-id'];
  return {
    status: answer.status,
    traceId: typeof traceId === 'string' ? traceId : '',
    body: answer.body,
  };
}

function run(action: string, body: unknown, key?: TestKey): Promise<Sent> {
  return send('POST', `/v1/actions/${action}/run`, {
    body: JSON.stringify(body),
    ...(key ? { key: key.key } : {}),
  });
}

function proxy(
  method: string,
  path: string,
  options: { user?: string | null; key?: TestKey; body?: string } = {},
): Promise<Sent> {
  const user = options.user === undefined ? USER : options.user;
  return send(method, `/v1/proxy/${path}`, {
    ...(options.key ? { key: options.key.key } : {}),
    ...(user === null ? {} : { headers: { 'service-user': user } }),
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

/** The request's audit rows, found by its trace id. */
async function rowsOf(sent: Sent): Promise<string[]> {
  const rows = await stack.db.sql<{ id: string }[]>`
    select id from audit_events where trace_id = ${sent.traceId}`;
  return rows.map((row) => row.id);
}

/**
 * Sends the refused request and checks the invariants every refusal shares: its error, nothing
 * at the app, exactly one `denied` row that the audit API lists and shows. Returns the event.
 */
async function refused(
  status: number,
  code: string,
  sendIt: () => Promise<Sent>,
): Promise<AuditEvent> {
  const before = stack.acme.demo.stats().apiRequests;
  const sent = await sendIt();
  expect(sent.status).toBe(status);
  expect(sent.body.error).toMatchObject({ code });
  expect(stack.acme.demo.stats().apiRequests).toBe(before);

  const ids = await rowsOf(sent);
  expect(ids).toHaveLength(1);
  const listed = await stack.request(stack.key, 'GET', '/v1/audit?decision=denied&limit=100');
  expect((listed.body.data as { id: string }[]).map((item) => item.id)).toContain(ids[0]);
  const shown = await stack.request(stack.key, 'GET', `/v1/audit/${ids[0] ?? ''}`);
  expect(shown.status).toBe(200);
  const event = shown.body as unknown as AuditEvent;
  expect(event).toMatchObject({
    decision: 'denied',
    reason: expect.stringMatching(new RegExp(`^${code}: `)),
    response: null,
    policy: null,
    via: 'api',
    trace_id: sent.traceId,
  });
  expect(event).not.toHaveProperty('approval');
  return event;
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect(USER);
  readOnly = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'read_only',
    agentId: 'reader',
  });
});

describe('a refused run is audited denied', () => {
  it('by a read-only key: insufficient_access', async () => {
    const event = await refused(403, 'insufficient_access', () =>
      run('acme.create_task', { user: USER, input: { title: 'not mine to write' } }, readOnly),
    );
    expect(event).toMatchObject({
      action: 'acme.create_task',
      scope: 'write',
      agent_id: 'reader',
      user: USER,
      reason: 'insufficient_access: A read-only key cannot run actions or use the proxy.',
      request: { action: 'acme.create_task', user: USER, input: { title: 'not mine to write' } },
    });
  });

  it("with input the action's schema refuses: invalid_request naming the fields", async () => {
    const event = await refused(400, 'invalid_request', () =>
      run('acme.create_task', { user: USER, input: { title: '', colour: 'red' } }),
    );
    expect(event).toMatchObject({
      action: 'acme.create_task',
      scope: 'write',
      agent_id: 'test-agent',
      user: USER,
      request: { input: { title: '', colour: 'red' } },
    });
    expect(event.reason).toMatch(/^invalid_request: .*input\.title: /);
    expect(event.reason).toContain('input.colour: unknown field');
  });

  it.each([
    ['no user', { input: {} }],
    ['an empty user', { user: '' }],
    ['a user that is not a string', { user: 42 }],
  ])('with %s: invalid_request, no user', async (_what, body) => {
    const event = await refused(400, 'invalid_request', () => run('acme.list_tasks', body));
    expect(event).toMatchObject({ action: 'acme.list_tasks', scope: 'read', user: null });
    expect(event.reason).toMatch(/^invalid_request: user: /);
  });

  it('of an unknown action: not_found, the action as asked and no scope', async () => {
    const event = await refused(404, 'not_found', () => run('acme.fly', { user: USER }));
    expect(event).toMatchObject({
      action: 'acme.fly',
      scope: null,
      user: USER,
      reason: 'not_found: Action "acme.fly" not found',
    });
  });

  it('with an invalid Gatehouse-Via header: invalid_request', async () => {
    const event = await refused(400, 'invalid_request', () =>
      send('POST', '/v1/actions/acme.list_tasks/run', {
        body: JSON.stringify({ user: USER }),
        headers: { 'gatehouse-via': 'carrier-pigeon' },
      }),
    );
    expect(event.reason).toMatch(/^invalid_request: gatehouse-via: /);
  });

  it('the refusal is its own row: the same call allowed afterwards has another', async () => {
    const refusal = await run('acme.list_tasks', { user: USER }, readOnly);
    const allowed = await run('acme.list_tasks', { user: USER });
    expect(allowed.status).toBe(200);
    const [refusedRow] = await rowsOf(refusal);
    const [allowedRow] = await rowsOf(allowed);
    expect(refusedRow).toEqual(expect.any(String));
    expect(allowedRow).toEqual(expect.any(String));
    expect(allowedRow).not.toBe(refusedRow);
  });
});

describe('a refused proxy call is audited denied', () => {
  it('by a read-only key: insufficient_access, graded by its method', async () => {
    const event = await refused(403, 'insufficient_access', () =>
      proxy('POST', 'acme/tasks', { key: readOnly, body: '{"title":"no"}' }),
    );
    expect(event).toMatchObject({
      action: 'acme.proxy',
      scope: 'write',
      agent_id: 'reader',
      user: USER,
      request: { method: 'POST', path: 'tasks', query: null, body_bytes: null },
    });
  });

  it('without Service-User: invalid_request, no user', async () => {
    const event = await refused(400, 'invalid_request', () =>
      proxy('GET', 'acme/tasks', { user: null }),
    );
    expect(event).toMatchObject({ action: 'acme.proxy', scope: 'read', user: null });
    expect(event.reason).toMatch(/^invalid_request: service-user: /);
  });

  it('to an unknown app: not_found', async () => {
    const event = await refused(404, 'not_found', () => proxy('DELETE', 'nope/tasks/1'));
    expect(event).toMatchObject({ action: 'nope.proxy', scope: 'destructive', user: USER });
  });

  it.each(['tasks/../me', 'tasks/%2e%2e/me', 'me#x'])(
    'to the path %s, which the app could not receive unchanged: invalid_request',
    async (path) => {
      const event = await refused(400, 'invalid_request', () => proxy('GET', `acme/${path}`));
      expect(event).toMatchObject({ action: 'acme.proxy', scope: 'read', user: USER });
      expect(event.reason).toMatch(/^invalid_request: path: /);
    },
  );

  it('a GET with a body: invalid_request, with the body size', async () => {
    const event = await refused(400, 'invalid_request', () =>
      proxy('GET', 'acme/tasks', { body: '{"a":1}' }),
    );
    expect(event.request).toMatchObject({ method: 'GET', body_bytes: 7 });
    expect(event.reason).toMatch(/^invalid_request: body: /);
  });
});

describe('requests that name no call leave no row', () => {
  it.each([
    [
      'a run without a key',
      () => send('POST', '/v1/actions/acme.list_tasks/run', { key: null, body: '{}' }),
    ],
    [
      'a run with a wrong key',
      () => send('POST', '/v1/actions/acme.list_tasks/run', { key: 'gh_nope', body: '{}' }),
    ],
    ['a proxy call without a key', () => send('GET', '/v1/proxy/acme/tasks', { key: null })],
    [
      'a run whose body is not JSON',
      () => send('POST', '/v1/actions/acme.list_tasks/run', { body: '{"user":' }),
    ],
    [
      // Malformed text is refused with the body, before anything reads it as a call.
      'a run whose body holds a NUL',
      () =>
        send('POST', '/v1/actions/acme.list_tasks/run', {
          body: JSON.stringify({ user: USER, input: { status: 'open\u0000' } }),
        }),
    ],
  ])('%s', async (_what, sendIt) => {
    const sent = await sendIt();
    expect(sent.status).toBeGreaterThanOrEqual(400);
    expect(sent.status).toBeLessThan(500);
    expect(await rowsOf(sent)).toEqual([]);
  });
});
