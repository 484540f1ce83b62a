import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../api/errors.js';
import { duplicateKeyAt, mediaTypeOf, parseJsonBody } from '../../api/http/json-body.js';

describe('duplicateKeyAt', () => {
  it.each([
    ['{"user":"a","user":"b"}', ['user']],
    ['{"a":{"x":1,"y":2,"x":3}}', ['a', 'x']],
    ['{"rules":[{"d":1},{"d":1,"d":2}]}', ['rules', '1', 'd']],
    ['[[0],[1,{"k":[],"k":{}}]]', ['1', '1', 'k']],
    ['{"user":"a","\\u0075ser":"b"}', ['user']],
    ['{"\\"":1,"\\u0022":2}', ['"']],
    // Strings that look like structure are only strings.
    ['{"a":"}\\",{\\"a\\":","a":1}', ['a']],
    ['{"a":"x\\\\","a":1}', ['a']],
    ['{"a":{},"a":[]}', ['a']],
  ])('finds the duplicate in %s', (text, path) => {
    JSON.parse(text);
    expect(duplicateKeyAt(text)).toEqual(path);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '[{"a":1},{"a":2}]',
    '{"a":"\\"a\\":1,","b":"a"}',
    '{"a":["a","a"],"b":{"c":"a"}}',
    '{"":1,"\\u0000x":2,"x":3}',
    '{"a":{},"b":{}}',
    '{}',
    '[]',
  ])('finds none in %s', (text) => {
    JSON.parse(text);
    expect(duplicateKeyAt(text)).toBeNull();
  });

  it('scans a large body in linear time', () => {
    const wide = JSON.stringify(
      Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 'v\\"'.repeat(5)])),
    );
    // CPU time, which other programs' load does not lengthen as it does the wall clock's:
    // well under a second for a linear scan, minutes for a quadratic one.
    const started = process.cpuUsage();
    expect(duplicateKeyAt(wide)).toBeNull();
    expect(duplicateKeyAt(`${wide.slice(0, -1)},"k7":1}`)).toEqual(['k7']);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(5_000);
  });
});

describe('parseJsonBody', () => {
  const parse = (text: string | Buffer, contentType = 'application/json') =>
    parseJsonBody(typeof text === 'string' ? Buffer.from(text) : text, contentType);

  function refusal(run: () => unknown): { code: string; issues: unknown } {
    try {
      run();
    } catch (error) {
      if (error instanceof ApiError) return { code: error.code, issues: error.extra.issues };
      throw error;
    }
    throw new Error('not refused');
  }

  it('reads UTF-8 JSON objects and arrays, with or without a BOM or charset', () => {
    expect(parse('{"a":"é"}')).toEqual({ a: 'é' });
    expect(parse('\ufeff[1]')).toEqual([1]);
    expect(parse(' \n{"a":1}', 'application/json; charset="UTF-8"')).toEqual({ a: 1 });
    expect(parse('{"a":"\\ud83d\\ude00"}')).toEqual({ a: '😀' });
    expect(parse('')).toEqual({});
  });

  it('refuses what is not a JSON object or array, without echoing it', () => {
    for (const text of ['"secret"', '42', 'null', '{"a":', 'nope']) {
      const error = refusal(() => parse(text));
      expect(error).toEqual({
        code: 'invalid_request',
        issues: [{ path: 'body', message: 'must be a JSON object or array' }],
      });
      expect(JSON.stringify(error)).not.toContain('secret');
    }
  });

  it('refuses other charsets and bytes that are not UTF-8', () => {
    expect(refusal(() => parse('{}', 'application/json; charset=latin1')).code).toBe(
      'unsupported_media_type',
    );
    expect(
      refusal(() => parse(Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]))),
    ).toEqual({
      code: 'invalid_request',
      issues: [{ path: 'body', message: 'must be valid UTF-8' }],
    });
  });

  it('names the field holding a NUL or a lone surrogate, in values and in names', () => {
    expect(refusal(() => parse('{"a":{"b":["ok","x\\u0000"]}}')).issues).toEqual([
      { path: 'a.b.1', message: 'must not contain the NUL character' },
    ]);
    expect(refusal(() => parse('{"a":{"\\udfff":1}}')).issues).toEqual([
      { path: 'a', message: expect.stringMatching(/lone UTF-16 surrogate/) },
    ]);
    expect(refusal(() => parse('["\\ud800"]')).issues).toEqual([
      { path: '0', message: expect.stringMatching(/lone UTF-16 surrogate/) },
    ]);
  });

  it('refuses nesting beyond 256 levels before scanning for duplicates', () => {
    const deep = `${'['.repeat(300)}${']'.repeat(300)}`;
    expect(refusal(() => parse(deep)).issues).toEqual([
      { path: 'body', message: 'must not nest deeper than 256 levels' },
    ]);
    expect(parse(`${'['.repeat(256)}${']'.repeat(256)}`)).toBeDefined();
  });
});

describe('mediaTypeOf', () => {
  it.each([
    ['application/json', 'application/json'],
    ['Application/JSON; charset=UTF-8', 'application/json'],
    [' application/merge-patch+json ;charset=utf-8', 'application/merge-patch+json'],
    ['text/plain;charset=UTF-8', 'text/plain'],
  ])('reads %j as %s', (header, type) => {
    expect(mediaTypeOf(header)).toBe(type);
  });

  it.each([undefined, '', 'json', 'application/', 'application/json, text/plain', '/json'])(
    'finds no media type in %j',
    (header) => {
      expect(mediaTypeOf(header)).toBeNull();
    },
  );
});
