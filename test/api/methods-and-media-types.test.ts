import { beforeAll, describe, expect, it } from '@jest/globals';
// Importing the app registers every route's operations in the OpenAPI registries.
import '../../api/app.js';
import { connectedUsersDocument, managementDocument } from '../../api/openapi/documents.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * What a client that sends the wrong method, or a body in another media type, is answered: 405
 * with `Allow` for a path the API has, 415 for a body the JSON API cannot read, both in the
 * envelope, for every operation both OpenAPI documents describe.
 */

interface Operation {
  operationId: string;
  requestBody?: { required?: boolean; content: Record<string, unknown> };
}

interface Documented {
  method: string;
  path: string;
  operation: Operation;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Any segment matches any path parameter; a UUID is also a well-formed id for those that check. */
const SAMPLE_ID = '019a0000-0000-7000-8000-000000000000';

const documented: Documented[] = [
  managementDocument('http://127.0.0.1'),
  connectedUsersDocument('http://127.0.0.1'),
].flatMap((document) =>
  Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation,
    })),
  ),
);
// The proxy sends any method and any body on to the app, as the caller sent them.
const apiOperations = documented.filter(({ path }) => !path.startsWith('/v1/proxy/'));

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, SAMPLE_ID);
const templateMatches = (template: string, url: string) =>
  new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(url);

/** The methods the documents give every path that `url` is, with HEAD wherever GET is. */
function allowedAt(url: string): Set<string> {
  const methods = new Set(
    apiOperations.filter(({ path }) => templateMatches(path, url)).map(({ method }) => method),
  );
  if (methods.has('GET')) methods.add('HEAD');
  return methods;
}

const paths = [...new Set(apiOperations.map(({ path }) => concrete(path)))].sort();
const wrongMethods = paths.flatMap((url) =>
  METHODS.filter((method) => !allowedAt(url).has(method)).map((method) => [method, url] as const),
);

const bodyTaking = apiOperations.filter(
  ({ operation }) => operation.requestBody?.content['application/json'] !== undefined,
);
/** POSTs documented without a body: they must keep working when sent none. */
const bodyless = apiOperations.filter(
  ({ method, operation }) =>
    method === 'POST' && (operation.requestBody === undefined || !operation.requestBody.required),
);

/** Not JSON, as clients send them: no Content-Type at all (bytes), text, XML, a form. */
const NOT_JSON = [
  ['no Content-Type', undefined, '{"a":1}'],
  ['text/plain', 'text/plain', '{"a":1}'],
  ['application/xml', 'application/xml', '<a>1</a>'],
  ['a form', 'application/x-www-form-urlencoded', 'a=1'],
] as const;

let db: TestDatabase;
let api: TestApi;
let full: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  full = await createTestKey(db.sql, { access: 'full' });
});

interface Envelope {
  error: { code: string; message: string; retryable: boolean };
}

async function envelopeOf(response: Response, status: number, code: string) {
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as Envelope;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code, retryable: false });
  return body.error;
}

function send(
  method: string,
  url: string,
  options: { contentType?: string | undefined; body?: string; key?: TestKey | null } = {},
) {
  const key = options.key === undefined ? full : options.key;
  return fetch(`${api.url}${url}`, {
    method,
    headers: {
      ...(key ? bearer(key.key) : {}),
      ...(options.contentType === undefined ? {} : { 'content-type': options.contentType }),
    },
    // Bytes, not a string: fetch gives a string body `text/plain` of its own accord.
    ...(options.body === undefined ? {} : { body: Buffer.from(options.body) }),
  });
}

describe('a method the path does not take', () => {
  it('is found for every path of the documents (the list is not empty)', () => {
    expect(paths.length).toBeGreaterThan(30);
    expect(wrongMethods.length).toBeGreaterThan(paths.length);
  });

  it.each(wrongMethods)('%s %s is 405 with Allow', async (method, url) => {
    const response = await send(method, url);
    await envelopeOf(response, 405, 'method_not_allowed');
    const allow = (response.headers.get('allow') ?? '').split(',').map((m) => m.trim());
    expect(new Set(allow)).toEqual(allowedAt(url));
  });

  it('is 405 with the body it brings, whatever its media type: the method is wrong first', async () => {
    const url = `/v1/approvals/${SAMPLE_ID}/approve`;
    for (const contentType of ['application/json', 'text/plain']) {
      const response = await send('PUT', url, { contentType, body: '{"grant":null}' });
      await envelopeOf(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe('POST');
    }
  });

  it('is 405 outside /v1 too, for the pages and documents the service serves', async () => {
    for (const [method, url, allow] of [
      ['POST', '/healthz', 'GET, HEAD'],
      ['DELETE', '/openapi/management.json', 'GET, HEAD'],
      ['PUT', '/connect/some-token', 'GET, HEAD'],
    ] as const) {
      const response = await send(method, url, { key: null });
      await envelopeOf(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe(allow);
    }
  });

  it('still asks for a key first under /v1, and an unknown path is still 404', async () => {
    await envelopeOf(
      await send('DELETE', '/v1/funded-access', { key: null }),
      401,
      'invalid_api_key',
    );
    await envelopeOf(await send('DELETE', '/v1/no-such-thing'), 404, 'not_found');
    await envelopeOf(
      await send('POST', '/v1/no-such-thing', { contentType: 'text/plain', body: 'x' }),
      404,
      'not_found',
    );
  });

  it('HEAD of a GET path is answered as GET is', async () => {
    const response = await send('HEAD', '/v1/funded-access');
    expect(response.status).toBe(200);
  });
});

describe('a request body that is not JSON', () => {
  const cases = bodyTaking.flatMap(({ method, path, operation }) =>
    NOT_JSON.map(
      ([what, contentType, body]) =>
        [operation.operationId, what, method, concrete(path), contentType, body] as const,
    ),
  );

  it('is checked for every operation that takes a body (the list is not empty)', () => {
    expect(bodyTaking.length).toBeGreaterThan(10);
  });

  it.each(cases)(
    '%s with %s is 415 unsupported_media_type',
    async (_operationId, _what, method, url, contentType, body) => {
      const error = await envelopeOf(
        await send(method, url, { contentType, body }),
        415,
        'unsupported_media_type',
      );
      expect(error.message).toContain(contentType ?? 'no Content-Type');
      expect(error.message).toContain('application/json');
    },
  );

  it.each(bodyTaking.map(({ method, path, operation }) => [operation.operationId, method, path]))(
    '%s still reads application/json with a charset and application/*+json',
    async (_operationId, method, path) => {
      for (const contentType of [
        'application/json; charset=utf-8',
        'application/merge-patch+json',
      ]) {
        const response = await send(method, concrete(path), { contentType, body: '{}' });
        const text = await response.text();
        expect({ contentType, status: response.status, text }).not.toMatchObject({ status: 415 });
        expect(text).not.toContain('unsupported_media_type');
      }
    },
  );

  it.each(bodyless.map(({ path, operation }) => [operation.operationId, path]))(
    '%s, documented without a required body, still takes none',
    async (_operationId, path) => {
      for (const contentType of [undefined, 'text/plain', 'application/json']) {
        const response = await send('POST', concrete(path), { contentType });
        // The sample id names nothing: the operation itself answers that.
        await envelopeOf(response, 404, 'not_found');
      }
    },
  );

  it('comes after the key: without one it is 401', async () => {
    await envelopeOf(
      await send('PUT', '/v1/funded-access', { key: null, contentType: 'text/plain', body: 'x' }),
      401,
      'invalid_api_key',
    );
  });
});

describe('the MCP endpoint', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'curl', version: '1' },
    },
  });
  const post = (contentType: string | undefined) =>
    fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: {
        ...bearer(full.key),
        'service-user': 'u_ann',
        accept: 'application/json, text/event-stream',
        ...(contentType === undefined ? {} : { 'content-type': contentType }),
      },
      body: Buffer.from(initialize),
    });

  it.each([undefined, 'text/plain', 'application/xml', 'application/merge-patch+json'])(
    'refuses a message sent as %s with 415, as a JSON-RPC error carrying the envelope',
    async (contentType) => {
      const response = await post(contentType);
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          data: { code: 'unsupported_media_type', retryable: false },
        },
      });
    },
  );

  it('takes application/json, with a charset too', async () => {
    for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
      const response = await post(contentType);
      expect({ contentType, status: response.status }).toEqual({ contentType, status: 200 });
      await response.text();
    }
  });
});
