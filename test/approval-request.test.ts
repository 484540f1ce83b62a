import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { approvalRequest, SHOWN_BODY_BYTES } from '../activities/calls/approval-request.js';
import type { ActionCall, CallRequest, ProxyCall } from '../workflows/call-types.js';

function call(target: CallRequest['target']): CallRequest {
  return {
    environmentId: 'env',
    environmentName: 'test',
    agentId: 'agent',
    userExternalId: 'u_1',
    via: 'mcp',
    fingerprint: 'f'.repeat(64),
    target,
    retryWindowSeconds: 3600,
  };
}

function proxyPost(
  body: Buffer | null,
  options: { headers?: Record<string, string>; query?: string } = {},
): CallRequest {
  const target: ProxyCall = {
    kind: 'proxy',
    app: 'acme',
    scope: 'write',
    method: 'POST',
    path: 'tasks/a%2Fb',
    query: options.query ?? '',
    headers: options.headers ?? {},
    bodyBase64: body === null ? null : body.toString('base64'),
  };
  return call(target);
}

function bodyOf(request: Record<string, unknown>): Record<string, unknown> {
  return request.body as Record<string, unknown>;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * What jsonb refuses: U+0000 and lone surrogates. The driver sends JSON.stringify's text, which
 * escapes a lone surrogate (`\ud800`): Postgres refuses that escape too.
 */
function storableInJsonb(value: unknown): boolean {
  return !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(value));
}

describe('the approval request', () => {
  it("shows an action's input, who asked and for whom", () => {
    const input = { title: 'x', notes: null };
    const target: ActionCall = {
      kind: 'action',
      action: 'acme.create_task',
      app: 'acme',
      scope: 'write',
      input,
    };
    expect(approvalRequest(call(target))).toEqual({
      action: 'acme.create_task',
      user: 'u_1',
      via: 'mcp',
      input,
    });
  });

  it('shows a text body whole, with its size and digest, and the raw path and query', () => {
    const text = Buffer.from('{"title":"café 😀"}\n', 'utf8');
    const request = approvalRequest(proxyPost(text, { query: 'a=%20b&c' }));
    expect(request).toEqual({
      action: 'acme.proxy',
      user: 'u_1',
      via: 'mcp',
      method: 'POST',
      path: 'tasks/a%2Fb',
      query: 'a=%20b&c',
      headers: {},
      body: {
        bytes: text.length,
        sha256: sha256(text),
        encoding: 'utf8',
        content: '{"title":"café 😀"}\n',
        truncated: false,
      },
    });
  });

  it('has a null query and a null body when there are none', () => {
    expect(approvalRequest(proxyPost(null))).toMatchObject({ query: null, body: null });
  });

  it('shows a binary body as base64', () => {
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x80]);
    expect(bodyOf(approvalRequest(proxyPost(binary)))).toEqual({
      bytes: 7,
      sha256: sha256(binary),
      encoding: 'base64',
      content: binary.toString('base64'),
      truncated: false,
    });
  });

  it('can tell what jsonb refuses', () => {
    expect(storableInJsonb({ a: 'caf\u00e9 😀' })).toBe(true);
    expect(storableInJsonb({ a: 'a\u0000' })).toBe(false);
    expect(storableInJsonb({ a: '\ud83d' })).toBe(false);
  });

  it('shows valid UTF-8 with a NUL as base64: jsonb could not store it', () => {
    const withNul = Buffer.from('a\u0000b', 'utf8');
    const request = approvalRequest(proxyPost(withNul));
    expect(bodyOf(request)).toMatchObject({ encoding: 'base64', content: 'YQBi', bytes: 3 });
    expect(storableInJsonb(request)).toBe(true);
  });

  it('shows the first 64 KiB of a larger body, with the whole body counted and hashed', () => {
    const big = Buffer.from('0123456789abcdef'.repeat(5000), 'utf8');
    expect(big.length).toBeGreaterThan(SHOWN_BODY_BYTES);
    const shown = bodyOf(approvalRequest(proxyPost(big)));
    expect(shown).toEqual({
      bytes: 80_000,
      sha256: sha256(big),
      encoding: 'utf8',
      content: big.subarray(0, 64 * 1024).toString('utf8'),
      truncated: true,
    });

    const binary = Buffer.alloc(70_000, 0xff);
    expect(bodyOf(approvalRequest(proxyPost(binary)))).toEqual({
      bytes: 70_000,
      sha256: sha256(binary),
      encoding: 'base64',
      content: binary.subarray(0, 64 * 1024).toString('base64'),
      truncated: true,
    });
  });

  it('cuts a large text body before a character rather than inside it', () => {
    // 'é' is two bytes: an odd prefix puts the 64 KiB mark inside one.
    const text = Buffer.from(`x${'é'.repeat(40_000)}`, 'utf8');
    const shown = bodyOf(approvalRequest(proxyPost(text)));
    expect(shown).toMatchObject({ encoding: 'utf8', truncated: true, bytes: 80_001 });
    const content = shown.content as string;
    expect(Buffer.byteLength(content, 'utf8')).toBe(64 * 1024 - 1);
    expect(content).toBe(`x${'é'.repeat(32_767)}`);
  });

  it('shows the forwarded headers as they will be sent', () => {
    const headers = {
      'content-type': 'application/json',
      'x-custom': 'a, b',
      'x-latin': 'caf\u00e9',
      'idempotency-key': 'k1',
    };
    const request = approvalRequest(proxyPost(Buffer.from('{}'), { headers }));
    expect(request).toMatchObject({ headers });
  });

  it('shows a header value jsonb could not store as its bytes in base64', () => {
    const request = approvalRequest(
      proxyPost(null, { headers: { 'x-nul': 'a\u0000b', 'x-surrogate': 'a\ud800', 'x-ok': 'ok' } }),
    );
    expect(request).toMatchObject({
      headers: {
        'x-nul': { encoding: 'base64', content: 'YQBi' },
        'x-surrogate': { encoding: 'base64', content: expect.any(String) },
        'x-ok': 'ok',
      },
    });
    expect(storableInJsonb(request)).toBe(true);
  });
});
