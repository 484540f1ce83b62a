import { beforeAll, describe, expect, it } from '@jest/globals';
import { createSql } from '../../infra/database/client.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const BODY_LIMIT = 2048;

let db: TestDatabase;
let api: TestApi;
let full: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(
    await startTestApi(testConfig(db.url, { BODY_LIMIT_BYTES: String(BODY_LIMIT) }), db.sql),
  );
  full = await createTestKey(db.sql, { access: 'full' });
});

interface Envelope {
  error: {
    code: string;
    message: string;
    retryable: boolean;
    issues?: { path: string; message: string }[];
  };
}

async function envelope(
  response: Response,
  status: number,
  code: string,
): Promise<Envelope['error']> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const text = await response.text();
  expect(text).not.toMatch(/\n\s+at /); // no stack trace, ever
  const body = JSON.parse(text) as Envelope;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(typeof body.error.retryable).toBe('boolean');
  return body.error;
}

function put(body: string, headers: Record<string, string> = {}) {
  return fetch(`${api.url}/v1/funded-access`, {
    method: 'PUT',
    headers: { ...bearer(full.key), 'content-type': 'application/json', ...headers },
    body,
  });
}

describe('the error envelope', () => {
  it('answers an unknown route under /v1 with not_found, after authentication', async () => {
    await envelope(
      await fetch(`${api.url}/v1/no-such-thing`, { headers: bearer(full.key) }),
      404,
      'not_found',
    );
    await envelope(await fetch(`${api.url}/v1/no-such-thing`), 401, 'invalid_api_key');
  });

  it('answers an unknown route outside /v1 with not_found', async () => {
    await envelope(await fetch(`${api.url}/nowhere`, { method: 'POST' }), 404, 'not_found');
  });

  it('refuses malformed JSON without echoing the body', async () => {
    const error = await envelope(
      await put('{"enabled": tru, "clientSecret": "s3cr3t-value"'),
      400,
      'invalid_request',
    );
    expect(error.message).not.toContain('s3cr3t');
  });

  it('refuses a body nested beyond 256 levels, even where an Idempotency-Key hashes it', async () => {
    const nested = (depth: number) =>
      `{"app":"acme","name":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const post = (body: string) =>
      fetch(`${api.url}/v1/auth-configs`, {
        method: 'POST',
        headers: {
          ...bearer(full.key),
          'content-type': 'application/json',
          'idempotency-key': `deep-${String(body.length)}`,
        },
        body,
      });
    // 1 level for the object, 256 for the arrays: refused as too deep, naming the body.
    const deep = await envelope(await post(nested(256)), 400, 'invalid_request');
    expect(deep.issues).toEqual([{ path: 'body', message: expect.stringMatching(/256 levels/) }]);
    // One level less is an ordinary body, refused for its fields.
    const fine = await envelope(await post(nested(255)), 400, 'invalid_request');
    expect(fine.issues?.map((issue) => issue.path)).toContain('name');
  });

  it('refuses a body over the limit with payload_too_large', async () => {
    const big = JSON.stringify({ enabled: true, padding: 'x'.repeat(BODY_LIMIT) });
    await envelope(await put(big), 413, 'payload_too_large');
  });

  it('refuses an unsupported charset with unsupported_media_type', async () => {
    const response = await put('{"enabled":true}', {
      'content-type': 'application/json; charset=klingon',
    });
    await envelope(response, 415, 'unsupported_media_type');
  });

  it('names the offending field of an invalid body', async () => {
    const wrongType = await envelope(await put('{"enabled":"yes"}'), 400, 'invalid_request');
    expect(wrongType.issues).toEqual([expect.objectContaining({ path: 'enabled' })]);
    const unknown = await envelope(
      await put('{"enabled":true,"colour":"red"}'),
      400,
      'invalid_request',
    );
    expect(unknown.issues).toEqual([{ path: 'colour', message: 'unknown field' }]);
    const missing = await envelope(await put('{}'), 400, 'invalid_request');
    expect(missing.issues?.[0]?.path).toBe('enabled');
    const notAnObject = await envelope(await put('[]'), 400, 'invalid_request');
    expect(notAnObject.issues?.[0]?.path).toBe('body');
  });

  it('keeps what was stored when a request is refused', async () => {
    expect((await put('{"enabled":true}')).status).toBe(200);
    await put('{"enabled":"no"}');
    await put('{"enabled":false,"extra":1}');
    const current = (await (
      await fetch(`${api.url}/v1/funded-access`, { headers: bearer(full.key) })
    ).json()) as {
      data: { enabled: boolean };
    };
    expect(current.data.enabled).toBe(true);
  });

  it('turns an unexpected failure into internal_error with no details', async () => {
    const brokenSql = createSql(db.url, { max: 1 });
    await brokenSql.end();
    const broken = await startTestApi(testConfig(db.url), brokenSql, { temporal: api.temporal });
    try {
      const response = await fetch(`${broken.url}/v1/funded-access`, { headers: bearer(full.key) });
      const error = await envelope(response, 500, 'internal_error');
      expect(error.retryable).toBe(true);
      expect(JSON.stringify(error)).not.toMatch(/CONNECTION_ENDED|postgres/i);
      expect(broken.logs.some((line) => line.includes('unhandled error'))).toBe(true);
    } finally {
      await broken.close();
    }
  });
});

describe('trace ids and logs', () => {
  it('gives every response a trace id that its log line carries', async () => {
    const response = await fetch(`${api.url}/v1/funded-access`, { headers: bearer(full.key) });
    const traceId = response.headers.get('x-trace-id') ?? '';
    expect(traceId).toMatch(/^[\da-f]{32}$/);
    const line = api.logs.find((l) => l.includes(traceId) && l.includes('request completed'));
    expect(line).toBeDefined();
  });

  it("continues a caller's W3C trace", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${api.url}/healthz`, {
      headers: { traceparent: `00-${trace}-00f067aa0ba902b7-01` },
    });
    expect(response.headers.get('x-trace-id')).toBe(trace);
  });

  it('never writes a key or a secret field to the logs', async () => {
    await fetch(`${api.url}/v1/funded-access`, { headers: bearer(full.key) });
    await fetch(`${api.url}/v1/funded-access`, { headers: { 'x-api-key': full.key } });
    await put('{"enabled":true,"clientSecret":"top-secret-value"}');
    const all = api.logs.join('\n');
    expect(all).toContain('[redacted]');
    expect(all).not.toContain(full.key);
    expect(all).not.toContain(full.key.slice(-32));
    expect(all).not.toContain('top-secret-value');
  });
});
