// The typed client against the real stack: typed operations of both interfaces, an
// error class per code with the fields of its code, and one Idempotency-Key per logical call,
// kept across the client's own retries.
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  ApprovalRequiredError,
  ConnectionExpiredError,
  ConnectionRequiredError,
  DeniedByPolicyError,
  Gatehouse,
  GatehouseError,
  IdempotencyKeyReusedError,
  InsufficientAccessError,
  InvalidApiKeyError,
  InvalidRequestError,
  NotFoundError,
  UpstreamInvalidRequestError,
} from 'gatehouse/client';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;
/** Agent `writer`, under a policy that allows its writes. */
let writer: TestKey;

function client(
  key: TestKey | string,
  options: { fetch?: (request: Request) => Promise<Response> } = {},
): Gatehouse {
  return new Gatehouse({
    baseUrl: stack.api.url,
    apiKey: typeof key === 'string' ? key : key.key,
    ...options,
  });
}

async function titles(user: string): Promise<string[]> {
  const answer = await client(stack.key).run('acme.list_tasks', { user });
  return (answer.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

/** What a call threw, for its class and fields to be checked. */
async function thrown(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  for (const user of ['u_ann', 'u_ben', 'u_cat']) await stack.connect(user);
  writer = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'writer' });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/writers', {
    body: {
      name: 'Writes allowed',
      agents: ['writer'],
      defaults: { read: 'allow', write: 'allow', destructive: 'deny' },
    },
  });
  expect(policy.status).toBe(200);
}, 300_000);

describe('typed operations', () => {
  it('answers connected-user operations with their records', async () => {
    const gatehouse = client(stack.key);
    const user = await gatehouse.api.GET('/v1/users/{user}', {
      params: { path: { user: 'u_ann' } },
    });
    expect(user.external_id).toBe('u_ann');
    const actions = await gatehouse.api.GET('/v1/actions', { params: { query: { app: 'acme' } } });
    expect(actions.data.map((action) => action.action)).toContain('acme.create_task');
    const link = await gatehouse.api.POST('/v1/connect/links', {
      body: { user: 'u_new', app: 'acme' },
    });
    expect(link.url).toMatch(/\/connect\//);
  });

  it('answers management operations in their {data} shape', async () => {
    const business = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'full',
      audience: 'business',
      agentId: 'dashboard',
    });
    const settings = await client(business).management.GET('/v1/connect-settings');
    expect(typeof settings.data.displayName).toBe('string');
    expect(['light', 'dark', 'system']).toContain(settings.data.theme.mode);
  });

  it('runs an action: {ok, data}', async () => {
    const result = await client(stack.key).run('acme.list_tasks', { user: 'u_ann' });
    expect(result).toEqual({ ok: true, data: { tasks: [] } });
  });
});

describe('errors, one class per code with its fields', () => {
  it('not_found, with status and trace id', async () => {
    const error = await thrown(
      client(stack.key).api.GET('/v1/users/{user}', { params: { path: { user: 'u_nobody' } } }),
    );
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toBeInstanceOf(GatehouseError);
    expect(error).toMatchObject({ code: 'not_found', status: 404, retryable: false });
    expect((error as NotFoundError).traceId).toMatch(/^[\da-f]{32}$/);
  });

  it('invalid_api_key', async () => {
    const error = await thrown(client('gk_test_wrong').api.GET('/v1/users'));
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(error).toMatchObject({ status: 401 });
  });

  it('insufficient_access, with required_access', async () => {
    const readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
    const error = await thrown(client(readOnly).run('acme.list_tasks', { user: 'u_ann' }));
    expect(error).toBeInstanceOf(InsufficientAccessError);
    expect((error as InsufficientAccessError).required_access).toBe('standard');
  });

  it('invalid_request, with issues', async () => {
    const error = await thrown(client(stack.key).run('acme.list_tasks', { user: '' }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'user' })]),
    );
  });

  it('connection_required', async () => {
    const error = await thrown(client(stack.key).run('acme.list_tasks', { user: 'u_stranger' }));
    expect(error).toBeInstanceOf(ConnectionRequiredError);
    expect(error).toMatchObject({ status: 409, code: 'connection_required' });
  });

  it('connection_expired, with reconnect_url', async () => {
    const cat = await stack.connect('u_cat');
    await stack.acme.demo.revokeGrants(cat.account);
    const error = await thrown(client(stack.key).run('acme.list_tasks', { user: 'u_cat' }));
    expect(error).toBeInstanceOf(ConnectionExpiredError);
    expect((error as ConnectionExpiredError).reconnect_url).toMatch(
      new RegExp(`^${stack.config.api.publicUrl}/connect/`),
    );
  });

  it('approval_required, with the approval', async () => {
    const error = await thrown(
      client(stack.key).run('acme.create_task', { user: 'u_ann', input: { title: 'held' } }),
    );
    expect(error).toBeInstanceOf(ApprovalRequiredError);
    const { approval } = error as ApprovalRequiredError;
    expect(approval).toEqual({
      id: expect.any(String),
      status: 'pending',
      requested_from: [],
      expires_at: expect.any(String),
    });
  });

  it('denied_by_policy', async () => {
    const error = await thrown(
      client(stack.key).run('acme.delete_task', { user: 'u_ann', input: { id: 't_1' } }),
    );
    expect(error).toBeInstanceOf(DeniedByPolicyError);
    expect(error).toMatchObject({ status: 403, retryable: false, approval: null });
  });

  it('upstream_invalid_request, with upstream_status', async () => {
    stack.acme.demo.faults.set({ mode: 'bad_request' });
    try {
      const error = await thrown(client(stack.key).run('acme.list_tasks', { user: 'u_ann' }));
      expect(error).toBeInstanceOf(UpstreamInvalidRequestError);
      expect(error).toMatchObject({ upstream_status: 400, status: 400 });
    } finally {
      stack.acme.demo.faults.reset();
    }
  });

  it('idempotency_key_reused', async () => {
    const gatehouse = client(writer);
    const idempotencyKey = crypto.randomUUID();
    await gatehouse.run(
      'acme.create_task',
      { user: 'u_ben', input: { title: 'first use of a key' } },
      { idempotencyKey },
    );
    const error = await thrown(
      gatehouse.run(
        'acme.create_task',
        { user: 'u_ben', input: { title: 'another call, same key' } },
        { idempotencyKey },
      ),
    );
    expect(error).toBeInstanceOf(IdempotencyKeyReusedError);
  });
});

describe('retries', () => {
  it('sends a retryable failure again and answers its success', async () => {
    const statuses: number[] = [];
    const recording = async (request: Request) => {
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    };
    stack.acme.demo.faults.set({ mode: 'unavailable', times: 1 });
    try {
      const result = await client(stack.key, { fetch: recording }).run('acme.list_tasks', {
        user: 'u_ann',
      });
      expect(result.ok).toBe(true);
      expect(statuses).toEqual([503, 200]);
    } finally {
      stack.acme.demo.faults.reset();
    }
  });

  it('keeps the Idempotency-Key across a retry after a lost answer: the write is made once', async () => {
    const sent: string[] = [];
    // The first answer is lost on the way back (as a dropped connection loses it), after
    // Gatehouse made the write; the client sends the call again.
    const losingFirstAnswer = async (request: Request): Promise<Response> => {
      sent.push(request.headers.get('idempotency-key') ?? '');
      const response = await fetch(request);
      if (sent.length === 1) throw new TypeError('fetch failed');
      return response;
    };
    const title = `once ${String(Date.now())}`;
    const result = await client(writer, { fetch: losingFirstAnswer }).run('acme.create_task', {
      user: 'u_ben',
      input: { title },
    });
    expect(result.ok).toBe(true);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^[\da-f-]{36}$/);
    expect(sent[1]).toBe(sent[0]);
    expect((await titles('u_ben')).filter((each) => each === title)).toHaveLength(1);
  });

  it('gives two logical calls two keys', async () => {
    const keys: string[] = [];
    const recording = (request: Request) => {
      keys.push(request.headers.get('idempotency-key') ?? '');
      return fetch(request);
    };
    const gatehouse = client(writer, { fetch: recording });
    const title = `twice ${String(Date.now())}`;
    await gatehouse.run('acme.create_task', { user: 'u_ben', input: { title } });
    await gatehouse.run('acme.create_task', { user: 'u_ben', input: { title } });
    expect(new Set(keys).size).toBe(2);
    expect((await titles('u_ben')).filter((each) => each === title)).toHaveLength(2);
  });
});

describe('proxy', () => {
  it("answers the app's own response, and a held write as approval_required", async () => {
    const gatehouse = client(stack.key);
    const listed = await gatehouse.proxy('acme', 'GET', '/tasks', {
      user: 'u_ann',
      query: { status: 'open' },
    });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual(expect.objectContaining({ tasks: expect.any(Array) }));
    const missing = await gatehouse.proxy('acme', 'GET', '/tasks/t_none', { user: 'u_ann' });
    expect(missing.status).toBe(404);
    const error = await thrown(
      gatehouse.proxy('acme', 'POST', '/tasks', { user: 'u_ann', body: { title: 'by proxy' } }),
    );
    expect(error).toBeInstanceOf(ApprovalRequiredError);
  });
});
