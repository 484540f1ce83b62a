import { beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { bearer } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Client mistakes and hostile bytes at the edge: each is answered
 * with the envelope and a 4xx naming what was wrong, never a 500, and nothing stored changes.
 */
let stack: CallStack;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_alice');
});

interface ErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  issues?: { path: string; message: string }[];
}

/** The envelope of a refused request, checked for shape, status and code. */
function refused(answer: Answer, status: number, code: string): ErrorBody {
  expect([answer.status, answer.headers.get('content-type')]).toEqual([
    status,
    expect.stringMatching(/^application\/json/),
  ]);
  expect(Object.keys(answer.body)).toEqual(['error']);
  const error = answer.body.error as ErrorBody;
  expect(error).toMatchObject({ code, retryable: false, message: expect.any(String) });
  expect(JSON.stringify(error)).not.toMatch(/\n\s+at /);
  return error;
}

const issuePaths = (error: ErrorBody) => (error.issues ?? []).map((issue) => issue.path);

/** A request whose path or query is sent exactly as written (fetch would normalise it). */
const get = (path: string) => stack.request(stack.key, 'GET', path);

/** A raw JSON body, exactly these bytes. */
function send(method: string, path: string, raw: string | Buffer, headers = {}) {
  return stack.request(stack.key, method, path, {
    raw,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The bytes of one HTTP/1.1 request on a fresh socket, and the server's whole answer. */
function rawExchange(request: Buffer): Promise<{ status: number; head: string; body: string }> {
  const url = new URL(stack.api.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(url.port), url.hostname, () => socket.end(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body });
    });
  });
}

const rawRequest = (lines: (string | Buffer)[]) =>
  rawExchange(
    Buffer.concat(lines.flatMap((line) => [typeof line === 'string' ? Buffer.from(line) : line])),
  );

function apiRequests(): number {
  return stack.acme.demo.stats().apiRequests;
}

async function userCount(): Promise<number> {
  const [row] = await stack.db.sql<{ n: number }[]>`select count(*)::int as n from connected_users`;
  return row?.n ?? -1;
}

async function defaultPolicy(): Promise<unknown> {
  return (await get('/v1/policies/default')).body;
}

const long = (length: number) => 'u'.repeat(length);

describe('malformed Unicode in a request', () => {
  it('refuses a lone surrogate in an action input, naming the field, before the app sees it', async () => {
    const before = apiRequests();
    const answer = await send(
      'POST',
      '/v1/actions/acme.create_task/run',
      '{"user":"u_alice","input":{"title":"surrogate \\ud83d test"}}',
    );
    const error = refused(answer, 400, 'invalid_request');
    expect(error.issues).toEqual([{ path: 'input.title', message: expect.any(String) }]);
    expect(apiRequests()).toBe(before);
  });

  it('refuses lone surrogates in management bodies and in property names', async () => {
    const users = await userCount();
    const link = await send('POST', '/v1/connect/links', '{"user":"a\\udc00","app":"acme"}');
    expect(issuePaths(refused(link, 400, 'invalid_request'))).toEqual(['user']);
    const key = await send(
      'POST',
      '/v1/actions/acme.create_task/run',
      '{"user":"u_alice","input":{"ti\\ud800tle":"x"}}',
    );
    expect(issuePaths(refused(key, 400, 'invalid_request'))).toEqual(['input']);
    // A well-formed pair is an ordinary character.
    const pair = await send(
      'POST',
      '/v1/connect/links',
      '{"user":"\\ud83d\\ude00 pair","app":"acme"}',
    );
    expect(pair.status).toBe(201);
    expect(await userCount()).toBe(users + 1);
  });

  it('refuses invalid UTF-8 in a body: nothing becomes U+FFFD', async () => {
    const users = await userCount();
    const policy = await defaultPolicy();
    const bytes = (json: string, bad: number[]) => {
      const [head = '', tail = ''] = json.split('@');
      return Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from(tail)]);
    };
    const link = await send(
      'POST',
      '/v1/connect/links',
      bytes('{"user":"@","app":"acme"}', [0xc3, 0x28]),
    );
    expect(issuePaths(refused(link, 400, 'invalid_request'))).toEqual(['body']);
    const agents = await send(
      'PUT',
      '/v1/policies/default',
      bytes(
        '{"name":"Default","agents":["@"],"defaults":{"read":"allow","write":"ask","destructive":"deny"}}',
        [0xff],
      ),
    );
    refused(agents, 400, 'invalid_request');
    // A surrogate encoded in UTF-8 is not UTF-8 either.
    const encodedSurrogate = await send(
      'POST',
      '/v1/connect/links',
      bytes('{"user":"@","app":"acme"}', [0xed, 0xa0, 0xbd]),
    );
    refused(encodedSurrogate, 400, 'invalid_request');
    expect(await userCount()).toBe(users);
    expect(await defaultPolicy()).toEqual(policy);
  });

  it('refuses JSON in another charset than UTF-8', async () => {
    const answer = await send(
      'POST',
      '/v1/connect/links',
      Buffer.from('{"user":"u_latin","app":"acme"}', 'utf16le'),
      { 'content-type': 'application/json; charset=utf-16le' },
    );
    refused(answer, 415, 'unsupported_media_type');
  });

  it('refuses invalid UTF-8 and bad escapes in a query, naming the parameter', async () => {
    expect(issuePaths(refused(await get('/v1/audit?user=%C3%28'), 400, 'invalid_request'))).toEqual(
      ['user'],
    );
    expect(
      issuePaths(refused(await get('/v1/audit?user=%ED%A0%BD'), 400, 'invalid_request')),
    ).toEqual(['user']);
    expect(
      issuePaths(refused(await get('/v1/users?customer=%ff'), 400, 'invalid_request')),
    ).toEqual(['customer']);
    expect(issuePaths(refused(await get('/v1/audit?user=%'), 400, 'invalid_request'))).toEqual([
      'user',
    ]);
    // Well-formed escapes, `+` for a space and repeated `&` are ordinary.
    expect((await get('/v1/audit?user=caf%C3%A9+au+lait&&decision=allowed')).status).toBe(200);
  });

  it('answers raw non-ASCII bytes in a path with the envelope', async () => {
    const answer = await rawRequest([
      'GET /v1/users/',
      Buffer.from([0xc3, 0x28]),
      ` HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.key.key}\r\nConnection: close\r\n\r\n`,
    ]);
    expect(answer.status).toBe(400);
    expect(answer.head).toMatch(/^content-type: application\/json/im);
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: 'invalid_request', retryable: false },
    });
  });
});

describe('malformed percent-escapes in path parameters', () => {
  it.each([
    ['GET', '/v1/users/%ff'],
    ['GET', '/v1/users/%C3%28'],
    ['GET', '/v1/users/%ED%A0%BD/connections'],
    ['DELETE', '/v1/users/%ff'],
    ['GET', '/v1/connections/%ff'],
    ['GET', '/v1/policies/%ff'],
    ['GET', '/v1/audit/%ff'],
    ['GET', '/v1/approvals/%ff'],
    ['GET', '/v1/actions/%ff'],
    ['POST', '/v1/actions/%ff/run'],
    ['POST', '/v1/auth-configs/%ff/disable'],
  ])('answers %s %s with 400 invalid_request', async (method, path) => {
    const answer = await stack.request(stack.key, method, path);
    expect(issuePaths(refused(answer, 400, 'invalid_request'))).toEqual(['path']);
  });

  it('keeps the user a malformed escape could have named', async () => {
    const users = await userCount();
    await stack.request(stack.key, 'DELETE', '/v1/users/u_alic%e');
    expect(await userCount()).toBe(users);
    expect((await get('/v1/users/u_alice')).status).toBe(200);
  });

  it.each(['/connect/%ff', '/connect/%ff/start', '/connect/%C3%28'])(
    'answers %s with the branded page of an invalid link',
    async (path) => {
      const response = await fetch(`${stack.api.url}${path}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toContain('This link is not valid');
    },
  );
});

describe('request bodies that cannot be decoded', () => {
  const policyBody = JSON.stringify({
    name: 'Default',
    agents: ['*'],
    defaults: { read: 'deny', write: 'deny', destructive: 'deny' },
  });

  it.each([
    ['gzip', Buffer.from(policyBody)],
    ['deflate', Buffer.from(policyBody)],
    ['br', Buffer.from(policyBody)],
    ['gzip', gzipSync(Buffer.from(policyBody)).subarray(0, 20)],
  ])('refuses a body its Content-Encoding %s does not decode', async (encoding, bytes) => {
    const policy = await defaultPolicy();
    const answer = await send('PUT', '/v1/policies/default', bytes, {
      'content-encoding': encoding,
    });
    expect(issuePaths(refused(answer, 400, 'invalid_request'))).toEqual(['body']);
    expect(await defaultPolicy()).toEqual(policy);
  });

  it('refuses an unknown Content-Encoding with 415', async () => {
    const answer = await send('PUT', '/v1/policies/default', policyBody, {
      'content-encoding': 'x-klingon',
    });
    refused(answer, 415, 'unsupported_media_type');
  });

  it('reads bodies that are encoded as they say', async () => {
    const body = (read: string) =>
      JSON.stringify({
        name: 'Default',
        agents: ['*'],
        defaults: { read, write: 'ask', destructive: 'deny' },
      });
    for (const [encoding, encode] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const) {
      const answer = await send('PUT', '/v1/policies/default', encode(Buffer.from(body('allow'))), {
        'content-encoding': encoding,
      });
      expect([encoding, answer.status]).toEqual([encoding, 200]);
    }
  });

  it('refuses an undecodable body sent through the proxy, before the app sees it', async () => {
    const before = apiRequests();
    const answer = await stack.request(stack.key, 'POST', '/v1/proxy/acme/tasks', {
      raw: Buffer.from('{"title":"x"}'),
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'service-user': 'u_alice',
      },
    });
    refused(answer, 400, 'invalid_request');
    expect(apiRequests()).toBe(before);
  });
});

describe('duplicate JSON keys', () => {
  it('refuses a duplicate key, naming it, before the app sees it', async () => {
    const before = apiRequests();
    const top = await send(
      'POST',
      '/v1/actions/acme.list_tasks/run',
      '{"user":"u_alice","user":"u_bob"}',
    );
    expect(issuePaths(refused(top, 400, 'invalid_request'))).toEqual(['user']);
    const nested = await send(
      'POST',
      '/v1/actions/acme.create_task/run',
      '{"user":"u_alice","input":{"title":"harmless","title":"harmful"}}',
    );
    expect(issuePaths(refused(nested, 400, 'invalid_request'))).toEqual(['input.title']);
    // The same key spelled with an escape is the same key.
    const escaped = await send(
      'POST',
      '/v1/actions/acme.list_tasks/run',
      '{"user":"u_alice","\\u0075ser":"u_bob"}',
    );
    expect(issuePaths(refused(escaped, 400, 'invalid_request'))).toEqual(['user']);
    expect(apiRequests()).toBe(before);
  });

  it('refuses a duplicate inside an array item, and keeps the stored policy', async () => {
    const policy = await defaultPolicy();
    const answer = await send(
      'PUT',
      '/v1/policies/default',
      '{"name":"Default","agents":["*"],"defaults":{"read":"allow","write":"ask","destructive":"deny"},' +
        '"rules":[{"action":"acme.list_tasks","decision":"deny","decision":"allow"}]}',
    );
    expect(issuePaths(refused(answer, 400, 'invalid_request'))).toEqual(['rules.0.decision']);
    expect(await defaultPolicy()).toEqual(policy);
  });
});

describe("one limit for a user's external id: 255 characters", () => {
  it('applies to connect links', async () => {
    const ok = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: long(255), app: 'acme' },
    });
    expect(ok.status).toBe(201);
    const over = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: long(256), app: 'acme' },
    });
    expect(issuePaths(refused(over, 400, 'invalid_request'))).toEqual(['user']);
  });

  it('applies to runs', async () => {
    expect((await stack.run('acme.list_tasks', { user: long(255) })).status).toBe(409);
    const over = await stack.run('acme.list_tasks', { user: long(256) });
    expect(issuePaths(refused(over, 400, 'invalid_request'))).toEqual(['user']);
  });

  it('applies to the proxy’s Service-User', async () => {
    const proxy = (user: string) =>
      stack.request(stack.key, 'GET', '/v1/proxy/acme/tasks', {
        headers: { 'service-user': user },
      });
    expect((await proxy(long(255))).status).toBe(409);
    expect(issuePaths(refused(await proxy(long(256)), 400, 'invalid_request'))).toEqual([
      'service-user',
    ]);
  });

  it('applies to GET /v1/users/{user}', async () => {
    expect((await get(`/v1/users/${long(255)}`)).status).toBe(200);
    refused(await get(`/v1/users/${long(256)}`), 400, 'invalid_request');
  });

  it('applies to ?user= of the audit log and the approvals', async () => {
    for (const list of ['/v1/audit', '/v1/approvals']) {
      expect((await get(`${list}?user=${long(255)}`)).status).toBe(200);
      const over = refused(await get(`${list}?user=${long(256)}`), 400, 'invalid_request');
      expect(issuePaths(over)).toEqual(['user']);
    }
  });

  it('refuses control characters wherever a user is named', async () => {
    expect(
      issuePaths(
        refused(await stack.run('acme.list_tasks', { user: 'u\u0001' }), 400, 'invalid_request'),
      ),
    ).toEqual(['user']);
    refused(await get('/v1/users/u%01'), 400, 'invalid_request');
  });
});

describe('the path an action builds', () => {
  it.each([
    ['acme.get_task', { id: '..' }],
    ['acme.get_task', { id: '.' }],
    ['acme.update_task', { id: '..', title: 'moved' }],
    ['acme.delete_task', { id: '..' }],
    ['google-calendar.get_event', { calendarId: '..', eventId: 'e1' }],
  ])('refuses %s with %j, naming the field, before the app sees it', async (action, input) => {
    const before = apiRequests();
    const answer = await stack.run(action, { user: 'u_alice', input });
    const field = Object.entries(input).find(([, value]) => value === '.' || value === '..')?.[0];
    expect(issuePaths(refused(answer, 400, 'invalid_request'))).toEqual([`input.${String(field)}`]);
    expect(apiRequests()).toBe(before);
  });

  it('still sends ids with dots that are not dot segments, encoded', async () => {
    const answer = await stack.run('acme.get_task', { user: 'u_alice', input: { id: '...' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: false, upstream_status: 404 });
  });
});

describe('header sizes', () => {
  it('reads a list cursor of 4,096 non-ASCII characters (about 36 KB encoded)', async () => {
    const cursor = encodeURIComponent('한'.repeat(4096));
    const filters = ['requested_from', 'agent', 'action']
      .map((name) => `${name}=${encodeURIComponent('한'.repeat(200))}`)
      .join('&');
    const user = encodeURIComponent('한'.repeat(255));
    const answer = await get(`/v1/approvals?${filters}&user=${user}&cursor=${cursor}`);
    expect(refused(answer, 400, 'invalid_request').issues).toEqual([
      { path: 'cursor', message: 'not a cursor from this list' },
    ]);
  });

  it('answers headers beyond the limit with a 431 envelope', async () => {
    const response = await fetch(`${stack.api.url}/v1/audit`, {
      headers: { ...bearer(stack.key.key), 'x-padding': 'p'.repeat(70_000) },
    });
    expect(response.status).toBe(431);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      error: {
        code: 'headers_too_large',
        message: expect.stringMatching(/65536 bytes/),
        retryable: false,
        limit_bytes: 65536,
      },
    });
  });

  it('answers a request that is not HTTP with a 400 envelope', async () => {
    const answer = await rawRequest(['GET /v1/audit HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n']);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'invalid_request' } });
  });
});
