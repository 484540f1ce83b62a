import { describe, expect, it } from '@jest/globals';
import { callFingerprint, canonicalJson } from '../api/calls/fingerprint.js';
import type { ProxyCall } from '../workflows/call-types.js';
import { passedHeaders, settleAction, settleProxy } from '../workflows/upstream-answer.js';

const json = (value: unknown) => ({ kind: 'parsed', value }) as const;
const raw = (text: string) =>
  ({ kind: 'raw', base64: Buffer.from(text).toString('base64') }) as const;

describe('the app answer → the caller answer', () => {
  it.each([
    [429, 'upstream_rate_limited'],
    [400, 'upstream_invalid_request'],
    [502, 'upstream_unavailable'],
    [503, 'upstream_unavailable'],
    [504, 'upstream_timeout'],
  ])('%i becomes %s for actions and the proxy, with upstream_status', (status, code) => {
    for (const settled of [
      settleAction({ status, headers: {}, body: json({ message: 'no' }) }),
      settleProxy({ status, headers: {}, body: raw('no') }),
    ]) {
      expect(settled.answer).toMatchObject({ kind: 'error', code });
      expect(settled.answer.kind === 'error' && settled.answer.extra.upstream_status).toBe(status);
      expect(settled.decision).toBe('failed');
    }
  });

  it.each([200, 201, 204])('an action answered %i is {ok: true, data}', (status) => {
    const settled = settleAction({ status, headers: {}, body: json({ id: 't_1' }) });
    expect(settled.answer).toEqual({
      kind: 'json',
      status: 200,
      body: { ok: true, data: { id: 't_1' } },
    });
    expect(settled.decision).toBe('allowed');
  });

  it('a 2xx whose body reports a failure is {ok: false, data, upstream_status}', () => {
    const body = { ok: false, error: 'channel_not_found' };
    const settled = settleAction({
      status: 200,
      headers: {},
      body: json(body),
      reportsFailure: true,
    });
    expect(settled.answer).toEqual({
      kind: 'json',
      status: 200,
      body: { ok: false, data: body, upstream_status: 200 },
    });
  });

  it.each([401, 403, 404, 409, 422, 500])(
    "an action answered %i is the app's failure as data, not an envelope",
    (status) => {
      const settled = settleAction({ status, headers: {}, body: json({ error: 'x' }) });
      expect(settled.answer).toEqual({
        kind: 'json',
        status: 200,
        body: { ok: false, data: { error: 'x' }, upstream_status: status },
      });
    },
  );

  it('passes a proxied answer through with its own status and headers, minus hop-by-hop ones', () => {
    const settled = settleProxy({
      status: 404,
      headers: {
        'content-type': 'text/plain',
        'x-request-id': 'r1',
        connection: 'keep-alive',
        'transfer-encoding': 'chunked',
        'content-encoding': 'gzip',
        'set-cookie': 'session=1',
      },
      body: raw('not here'),
    });
    expect(settled.answer).toEqual({
      kind: 'passthrough',
      status: 404,
      headers: { 'content-type': 'text/plain', 'x-request-id': 'r1' },
      bodyBase64: Buffer.from('not here').toString('base64'),
    });
    expect(settled.response).toMatchObject({ status: 404, bytes: 8 });
    expect(passedHeaders({ Upgrade: 'h2c', Accept: 'x' })).toEqual({ Accept: 'x' });
  });

  it("drops headers named in Connection or Proxy-Connection, and the app's origin policies", () => {
    expect(
      passedHeaders({
        'content-type': 'application/json',
        connection: 'keep-alive, X-Hop-One',
        'x-hop-one': 'gone',
        'proxy-connection': 'X-Hop-Two',
        'x-hop-two': 'gone',
        'strict-transport-security': 'max-age=63072000',
        'content-security-policy': "default-src 'none'",
        'access-control-allow-origin': '*',
        'access-control-allow-credentials': 'true',
        'set-cookie': 'session=abc',
        etag: '"v1"',
      }),
    ).toEqual({ 'content-type': 'application/json', etag: '"v1"' });
  });

  it('keeps Retry-After of a 429', () => {
    const settled = settleAction({
      status: 429,
      headers: { 'retry-after': '7' },
      body: json(null),
    });
    expect(settled.answer.kind === 'error' && settled.answer.extra.retry_after).toBe('7');
  });
});

describe('the call fingerprint', () => {
  const base = { environmentId: 'e', agentId: 'a', userExternalId: 'u', idempotencyKey: undefined };
  const action = (input: unknown) =>
    callFingerprint({
      ...base,
      target: { kind: 'action', action: 'acme.create_task', app: 'acme', scope: 'write', input },
    });

  it('ignores key order and absent values, and nothing else', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null, z: undefined })).toBe(
      '{"a":null,"b":[1,{"c":2,"d":1}]}',
    );
    expect(action({ title: 'x', notes: 'y' })).toBe(action({ notes: 'y', title: 'x' }));
    expect(action({ title: 'x' })).not.toBe(action({ title: 'X' }));
  });

  it('tells apart environments, agents, users, Idempotency-Keys and proxy content types', () => {
    const target = {
      kind: 'action',
      action: 'acme.list_tasks',
      app: 'acme',
      scope: 'read',
      input: {},
    } as const;
    const prints = new Set([
      callFingerprint({ ...base, target }),
      callFingerprint({ ...base, agentId: 'b', target }),
      callFingerprint({ ...base, userExternalId: 'v', target }),
      callFingerprint({ ...base, idempotencyKey: 'k', target }),
      callFingerprint({ ...base, environmentId: 'f', target }),
    ]);
    expect(prints.size).toBe(5);
    const proxy = (contentType: string): ProxyCall => ({
      kind: 'proxy',
      app: 'acme',
      scope: 'write',
      method: 'POST',
      path: 'tasks',
      query: '',
      headers: { 'content-type': contentType },
      bodyBase64: 'e30=',
    });
    expect(callFingerprint({ ...base, target: proxy('application/json') })).not.toBe(
      callFingerprint({ ...base, target: proxy('text/plain') }),
    );
  });
});
