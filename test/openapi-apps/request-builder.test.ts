import { describe, expect, it } from '@jest/globals';
import {
  buildRequest,
  importDocument,
  RequestBuildError,
  type OperationDescriptor,
} from '../../activities/openapi-apps/index.js';
import { petstore20, petstore30 } from './documents.js';

const imported = importDocument({ document: JSON.stringify(petstore30) });
const old = importDocument({ document: JSON.stringify(petstore20) });

function action(name: string, from = imported): OperationDescriptor {
  const found = from.operations.find((operation) => operation.name === name);
  if (!found) throw new Error(`no action ${name}`);
  return found;
}

function buildError(descriptor: OperationDescriptor, input: unknown): RequestBuildError {
  try {
    buildRequest(descriptor, input);
  } catch (error) {
    if (error instanceof RequestBuildError) return error;
    throw error;
  }
  throw new Error('the request was built');
}

/** The path the app receives: the URL as a WHATWG parser (fetch's) resolves it. */
function received(path: string): string {
  return new URL(`${imported.baseUrl.url}${path}`).pathname;
}

describe('path parameters', () => {
  const getPet = action('get_pet');

  it('fill only their own segment, whatever they hold', () => {
    const values: [string, string][] = [
      ['../admin', '/v1/pets/..%2Fadmin'],
      ['a/b', '/v1/pets/a%2Fb'],
      ['%2e%2e', '/v1/pets/%252e%252e'],
      ['%2F', '/v1/pets/%252F'],
      ['?x=1', '/v1/pets/%3Fx%3D1'],
      ['#frag', '/v1/pets/%23frag'],
      ['a\\b', '/v1/pets/a%5Cb'],
      ['..%2f..', '/v1/pets/..%252f..'],
      ['...', '/v1/pets/...'],
      ['chien-été 🐕', '/v1/pets/chien-%C3%A9t%C3%A9%20%F0%9F%90%95'],
      ['a\r\nHost: evil', '/v1/pets/a%0D%0AHost%3A%20evil'],
    ];
    for (const [value, path] of values) {
      const request = buildRequest(getPet, { path: { petId: value } });
      expect({ value, path: request.path }).toEqual({ value, path: path.slice('/v1'.length) });
      // And a URL parser resolves it to that same path: one segment below /pets.
      expect({ value, received: received(request.path) }).toEqual({ value, received: path });
      expect(request.method).toBe('GET');
      expect(request.queryPairs).toEqual([]);
    }
  });

  it('refuse a whole segment of "." or "..", which a URL parser resolves even encoded, and an empty one', () => {
    for (const value of ['.', '..', '']) {
      const error = buildError(getPet, { path: { petId: value } });
      expect({ value, field: error.field }).toEqual({ value, field: 'input.path.petId' });
    }
  });

  it('refuse what is not text, a number or a boolean, and text that is not Unicode', () => {
    expect(buildError(getPet, { path: { petId: { toString: '..' } } }).field).toBe(
      'input.path.petId',
    );
    expect(buildError(getPet, { path: {} }).message).toBe('is required');
    expect(buildError(getPet, { path: { petId: '\ud800' } }).message).toBe(
      'is not well-formed Unicode text',
    );
    expect(buildRequest(getPet, { path: { petId: 42 } }).path).toBe('/pets/42');
  });

  it('refuse parameters the operation does not declare', () => {
    expect(buildError(getPet, { path: { petId: 'a', admin: 'yes' } }).field).toBe(
      'input.path.admin',
    );
    expect(buildError(getPet, { query: { debug: 'true' } }).field).toBe('input.query.debug');
    expect(buildError(getPet, { headers: { Authorization: 'Bearer x' } }).field).toBe(
      'input.headers.Authorization',
    );
    expect(buildError(getPet, { path: { petId: 'a' }, body: {} }).field).toBe('input.body');
    expect(buildError(getPet, 'not an object').field).toBe('input');
  });
});

describe('query, headers and body', () => {
  it('write the declared query parameters in their serialization, in order', () => {
    const list = action('list_pets_2');
    const request = buildRequest(list, {
      query: { limit: 10, tags: ['a b', 'c&d=e'], kinds: ['cat', 'dog'] },
      headers: { 'X-Request-Id': 'r-1' },
    });
    expect(request).toEqual({
      method: 'GET',
      path: '/pets',
      queryPairs: [
        ['limit', '10'],
        ['tags', 'a b'],
        ['tags', 'c&d=e'],
        ['kinds', 'cat,dog'],
      ],
      headers: { 'x-request-id': 'r-1' },
    });
    // As a sender writes it: every value escaped, nothing added.
    const search = new URLSearchParams(request.queryPairs).toString();
    expect(search).toBe('limit=10&tags=a+b&tags=c%26d%3De&kinds=cat%2Cdog');
    expect(buildRequest(list, {}).queryPairs).toEqual([]);
  });

  it('write Swagger 2.0 collection formats', () => {
    const find = action('find_pets', old);
    expect(
      buildRequest(find, { query: { status: ['available', 'sold'], ids: [1, 2] } }).queryPairs,
    ).toEqual([
      ['status', 'available'],
      ['status', 'sold'],
      ['ids', '1,2'],
    ]);
  });

  it('refuse a header value that would split the header', () => {
    const list = action('list_pets_2');
    const error = buildError(list, { headers: { 'X-Request-Id': 'a\r\nX-Admin: 1' } });
    expect(error.field).toBe('input.headers.X-Request-Id');
  });

  it('send the body as JSON, with its +json media type where the document says one', () => {
    const create = action('create_pet');
    expect(buildRequest(create, { body: { name: 'Rex' } })).toEqual({
      method: 'POST',
      path: '/pets',
      queryPairs: [],
      body: { name: 'Rex' },
    });
    expect(buildError(create, {}).field).toBe('input.body');
    const update = action('pets_update');
    expect(buildRequest(update, { path: { petId: 'p1' }, body: { name: 'Rex' } })).toEqual({
      method: 'PUT',
      path: '/pets/p1',
      queryPairs: [],
      body: { name: 'Rex' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
  });
});

describe('path templates of the document', () => {
  it('that would leave their own path are skipped at import', () => {
    const document = {
      openapi: '3.0.3',
      info: { title: 'x', version: '1' },
      servers: [{ url: 'https://api.example' }],
      paths: Object.fromEntries(
        ['/a/../admin', '/a/%2e%2e/admin', '/a?debug=1', '/a#x', 'relative', '/a/{}', '/a b'].map(
          (path, i) => [
            path,
            { get: { operationId: `op${String(i)}`, responses: { '200': { description: 'ok' } } } },
          ],
        ),
      ),
    };
    const result = importDocument({ document: JSON.stringify(document) });
    expect(result.operations).toEqual([]);
    expect(result.skipped.map(({ path, reason }) => [path, reason.replace(/ \(.*$/, '')])).toEqual([
      ['/a/../admin', 'its path "/a/../admin" has a "." or ".." segment'],
      ['/a/%2e%2e/admin', 'its path "/a/%2e%2e/admin" has a "." or ".." segment'],
      ['/a?debug=1', 'its path "/a?debug=1" holds characters a path template cannot'],
      ['/a#x', 'its path "/a#x" holds characters a path template cannot'],
      ['relative', 'its path "relative" does not start with "/"'],
      ['/a/{}', 'its path "/a/{}" has an empty placeholder "{}"'],
      ['/a b', 'its path "/a b" holds characters a path template cannot'],
    ]);
  });

  it('with a placeholder inside a segment keep the rest of the segment', () => {
    const document = {
      openapi: '3.0.3',
      info: { title: 'x', version: '1' },
      servers: [{ url: 'https://api.example' }],
      paths: {
        '/files/{name}.json': {
          get: {
            operationId: 'getFile',
            parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    const [file] = importDocument({ document: JSON.stringify(document) }).operations;
    if (!file) throw new Error('not imported');
    expect(buildRequest(file, { path: { name: '..' } }).path).toBe('/files/...json');
    expect(buildRequest(file, { path: { name: '../../etc/passwd' } }).path).toBe(
      '/files/..%2F..%2Fetc%2Fpasswd.json',
    );
  });
});
