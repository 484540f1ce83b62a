import { describe, expect, it } from '@jest/globals';
import { toolInputIssues } from '../../activities/mcp-apps/tool-input.js';
import {
  importDocument,
  importOpenApi,
  OpenApiImportError,
  type OpenApiImport,
  type OperationDescriptor,
} from '../../activities/openapi-apps/index.js';
import { petstore20, petstore30, petstore31Yaml } from './documents.js';

function action(imported: OpenApiImport, name: string): OperationDescriptor {
  const found = imported.operations.find((operation) => operation.name === name);
  if (!found)
    throw new Error(`no action ${name} in ${imported.operations.map((o) => o.name).join(', ')}`);
  return found;
}

function refusal(work: () => unknown): OpenApiImportError {
  try {
    work();
  } catch (error) {
    if (error instanceof OpenApiImportError) return error;
    throw error;
  }
  throw new Error('the import was not refused');
}

describe('an OpenAPI 3.0 document (JSON)', () => {
  const imported = importDocument({
    document: JSON.stringify(petstore30),
    gradeOverrides: { delete_pet: 'write', no_such_action: 'read' },
  });

  it('makes each sendable operation an action named in the catalog shape, sorted by name', () => {
    expect(imported.specification).toBe('3.0.3');
    expect(imported.title).toBe('Pet Store');
    expect(imported.operations.map((operation) => operation.name)).toEqual([
      'create_pet',
      'delete_pet',
      'get_owners_owner_id_pets',
      'get_pet',
      'list_pets',
      'list_pets_2',
      'list_pets_3',
      'pets_update',
    ]);
    expect(action(imported, 'pets_update').operationId).toBe('pets/update');
    // No operationId: named after its method and path.
    expect(action(imported, 'get_owners_owner_id_pets')).toMatchObject({
      operationId: null,
      method: 'GET',
      path: '/owners/{ownerId}/pets',
    });
  });

  it('resolves names that collide in path order, reporting the collision', () => {
    expect(imported.collisions).toEqual([
      {
        name: 'list_pets',
        operations: [
          { method: 'POST', path: '/pet-trees', operationId: 'list-pets', name: 'list_pets' },
          { method: 'GET', path: '/pets', operationId: 'listPets', name: 'list_pets_2' },
          { method: 'GET', path: '/pets-again', operationId: 'list_pets', name: 'list_pets_3' },
        ],
      },
    ]);
  });

  it('grades by override, then x-gatehouse-scope, then method', () => {
    const grades = Object.fromEntries(
      imported.operations.map((operation) => [
        operation.name,
        `${operation.grade} (${operation.gradeSource})`,
      ]),
    );
    expect(grades).toEqual({
      create_pet: 'write (method)',
      delete_pet: 'write (override)',
      get_owners_owner_id_pets: 'read (method)',
      get_pet: 'read (method)',
      list_pets: 'write (method)',
      list_pets_2: 'read (method)',
      list_pets_3: 'read (method)',
      pets_update: 'destructive (extension)',
    });
    expect(imported.unmatched).toEqual({ allowlist: [], gradeOverrides: ['no_such_action'] });
  });

  it('skips what an action cannot send, each with its reason', () => {
    expect(
      imported.skipped.map(({ method, path, name, reason }) => ({ method, path, name, reason })),
    ).toEqual([
      {
        method: 'OPTIONS',
        path: '/pets/{petId}',
        name: null,
        reason: expect.stringContaining('not a method actions send') as unknown,
      },
      {
        method: 'HEAD',
        path: '/pets/{petId}',
        name: null,
        reason: expect.stringContaining('HEAD answers no body') as unknown,
      },
      {
        method: 'POST',
        path: '/pets/{petId}/photo',
        name: 'upload_photo',
        reason:
          'its request body is "multipart/form-data" only, and Gatehouse sends JSON bodies (application/json or +json)',
      },
      {
        method: 'PATCH',
        path: '/pets/{petId}/photo',
        name: 'tag_photo',
        reason: 'it requires a cookie, which Gatehouse does not send',
      },
      {
        method: 'GET',
        path: '/admin',
        name: 'admin_panel',
        reason: 'its x-gatehouse-scope is "harmless", not read, write or destructive',
      },
    ]);
  });

  it('takes the first server with its variables at their defaults', () => {
    expect(imported.baseUrl).toEqual({ url: 'https://eu.pets.example/v1', source: 'servers' });
  });

  it('describes parameters with their serialization, ignoring cookies and Authorization', () => {
    const list = action(imported, 'list_pets_2');
    expect(
      list.parameters.map(({ name, in: where, required, serialization }) => ({
        name,
        in: where,
        required,
        serialization,
      })),
    ).toEqual([
      { name: 'limit', in: 'query', required: false, serialization: 'plain' },
      { name: 'tags', in: 'query', required: false, serialization: 'exploded' },
      { name: 'kinds', in: 'query', required: false, serialization: 'comma' },
      { name: 'X-Request-Id', in: 'header', required: false, serialization: 'plain' },
    ]);
    expect(list.ignoredParameters).toEqual([
      { name: 'session', in: 'cookie', reason: 'a cookie, which Gatehouse does not send' },
      {
        name: 'Authorization',
        in: 'header',
        reason: 'OpenAPI ignores this header as a parameter',
      },
    ]);
  });

  it('builds one grouped input schema, 3.0 schemas read as JSON Schema 2020-12', () => {
    const create = action(imported, 'create_pet');
    expect(create.body?.mediaType).toBe('application/json');
    expect(create.inputSchema).toEqual({
      type: 'object',
      description: 'Create a pet',
      additionalProperties: false,
      properties: {
        body: {
          type: 'object',
          // `id` is read-only: not required of a request.
          required: ['name'],
          properties: {
            id: { type: 'integer', readOnly: true },
            name: { type: 'string', minLength: 1 },
            nickname: { type: ['string', 'null'] },
            age: { type: 'integer', exclusiveMinimum: 0 },
            owner: {
              anyOf: [
                { type: 'null' },
                {
                  allOf: [
                    {
                      type: 'object',
                      properties: { name: { type: 'string' } },
                      required: ['name'],
                    },
                  ],
                },
              ],
            },
            'x-secret': { type: 'string' },
          },
        },
      },
      required: ['body'],
    });
    const update = action(imported, 'pets_update');
    expect(update.body?.mediaType).toBe('application/merge-patch+json');
    expect(update.inputSchema.required).toEqual(['path', 'body']);
  });

  it('keeps a recursive schema once, in $defs, and ajv checks input against it', async () => {
    const trees = action(imported, 'list_pets');
    expect(trees.inputSchema.$defs).toEqual({
      Tree: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/$defs/Tree' } },
        },
      },
    });
    const valid = { body: { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] } };
    expect(await toolInputIssues(trees.inputSchema, valid)).toEqual([]);
    const invalid = { body: { name: 'a', children: [{ children: [] }] } };
    expect(await toolInputIssues(trees.inputSchema, invalid)).toEqual([
      { path: 'input.body.children.0.name', message: 'is required' },
    ]);
    expect(await toolInputIssues(trees.inputSchema, { query: {} })).toEqual([
      { path: 'input.query', message: 'unknown field' },
    ]);
  });

  it('normalizes every security scheme, saying why it cannot serve the others', () => {
    expect(imported.auth).toEqual({
      petsOAuth: {
        kind: 'oauth2',
        authorizationUrl: 'https://auth.pets.example/authorize',
        tokenUrl: 'https://auth.pets.example/token',
        refreshUrl: 'https://auth.pets.example/refresh',
        scopes: { 'pets:read': 'Read your pets', 'pets:write': 'Change your pets' },
      },
      apiKey: { kind: 'api_key', in: 'header', name: 'X-Api-Key' },
      bearer: { kind: 'http_bearer', bearerFormat: 'JWT' },
      basic: { kind: 'http_basic' },
      cookieKey: {
        kind: 'unsupported',
        type: 'apiKey',
        reason: expect.stringContaining('never as a cookie') as unknown,
      },
      oidc: {
        kind: 'unsupported',
        type: 'openIdConnect',
        reason: expect.stringContaining('OpenID Connect discovery') as unknown,
      },
      machines: {
        kind: 'unsupported',
        type: 'oauth2',
        reason: expect.stringContaining('no authorization-code flow') as unknown,
      },
      mtls: {
        kind: 'unsupported',
        type: 'mutualTLS',
        reason: expect.stringContaining('client certificate') as unknown,
      },
    });
    expect(action(imported, 'get_pet').security).toEqual([
      { schemes: [{ scheme: 'petsOAuth', scopes: ['pets:read'] }] },
    ]);
    expect(action(imported, 'create_pet').security).toEqual([
      { schemes: [{ scheme: 'petsOAuth', scopes: ['pets:write'] }] },
      { schemes: [{ scheme: 'apiKey', scopes: [] }] },
    ]);
    expect(action(imported, 'create_pet').unservable).toBeNull();
  });

  it('imports only the allow-list, never reading the others, and names the unknown ones', () => {
    const only = importDocument({
      document: JSON.stringify(petstore30),
      allowlist: ['get_pet', 'admin_panel', 'nothing_by_that_name'],
    });
    expect(only.operations.map((operation) => operation.name)).toEqual(['get_pet']);
    expect(only.skipped.map((skipped) => skipped.name)).toEqual([null, null, 'admin_panel']);
    expect(only.unmatched.allowlist).toEqual(['nothing_by_that_name']);
  });

  it('refuses a grade override that is not a grade, naming grade_overrides', () => {
    const error = refusal(() =>
      importDocument({
        document: JSON.stringify(petstore30),
        gradeOverrides: { get_pet: 'harmless' as 'read' },
      }),
    );
    expect(error.field).toBe('grade_overrides');
    expect(error.message).toContain('"get_pet"');
  });

  it('takes the base URL override over the servers', () => {
    const overridden = importDocument({
      document: JSON.stringify(petstore30),
      baseUrl: 'https://sandbox.pets.example/v1/',
    });
    expect(overridden.baseUrl).toEqual({
      url: 'https://sandbox.pets.example/v1',
      source: 'override',
    });
    for (const bad of ['ftp://pets.example', 'https://user:pw@pets.example', 'not a url']) {
      expect(
        refusal(() => importDocument({ document: JSON.stringify(petstore30), baseUrl: bad })).field,
      ).toBe('base_url');
    }
  });

  it('imports the same in its worker thread', async () => {
    const threaded = await importOpenApi({
      document: JSON.stringify(petstore30),
      gradeOverrides: { delete_pet: 'write', no_such_action: 'read' },
    });
    expect(threaded).toEqual(imported);
  });
});

describe('an OpenAPI 3.1 document (YAML)', () => {
  const imported = importDocument({
    document: petstore31Yaml,
    documentUrl: 'https://pets.example/specs/openapi.yaml',
  });

  it('resolves its relative server against the URL it came from', () => {
    expect(imported.specification).toBe('3.1.0');
    expect(imported.baseUrl).toEqual({
      url: 'https://pets.example/api/v2',
      source: 'document_url',
    });
  });

  it('refuses a relative server when the document came without a URL', () => {
    const error = refusal(() => importDocument({ document: petstore31Yaml }));
    expect(error.field).toBe('base_url');
    expect(error.message).toContain('relative');
  });

  it('keeps 2020-12 schemas as they are, a $ref with siblings as allOf', () => {
    expect(action(imported, 'list_pets').inputSchema.properties).toEqual({
      query: {
        type: 'object',
        additionalProperties: false,
        properties: { limit: { type: ['integer', 'null'], exclusiveMinimum: 0 } },
      },
    });
    const create = action(imported, 'create_pet');
    expect(create.inputSchema.properties).toEqual({
      body: {
        description: 'The pet to create',
        allOf: [
          {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string' },
              tag: { type: ['string', 'null'] },
              parent: { $ref: '#/$defs/NewPet' },
            },
          },
        ],
      },
    });
  });

  it('marks an operation that needs two credentials at once unservable', () => {
    expect(action(imported, 'create_pet').unservable).toBe(
      'it requires bearer and apiKey together (Gatehouse sends one credential)',
    );
    expect(action(imported, 'list_pets').unservable).toBeNull();
    expect(action(imported, 'list_pets').security).toEqual([]);
  });
});

describe('a Swagger 2.0 document', () => {
  const imported = importDocument({ document: JSON.stringify(petstore20) });

  it('is read as OpenAPI 3.0: server, body parameter, collection formats, security', () => {
    expect(imported.specification).toBe('2.0');
    expect(imported.baseUrl).toEqual({ url: 'https://old.pets.example/api', source: 'servers' });
    expect(imported.operations.map((operation) => operation.name)).toEqual([
      'add_pet',
      'delete_pet',
      'find_pets',
    ]);
    const find = action(imported, 'find_pets');
    expect(find.parameters.map(({ name, serialization }) => [name, serialization])).toEqual([
      ['status', 'exploded'],
      ['ids', 'comma'],
    ]);
    // The connection's API key goes in `api_key`: never one the agent sets.
    expect(find.ignoredParameters.map((parameter) => parameter.name)).toEqual(['api_key']);
    expect(action(imported, 'delete_pet').parameters[0]).toMatchObject({
      name: 'petId',
      in: 'path',
      required: true,
      schema: { type: 'integer', format: 'int64' },
    });
    expect(action(imported, 'add_pet').body).toMatchObject({
      mediaType: 'application/json',
      required: true,
    });
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        name: 'update_pet_with_form',
        reason: expect.stringContaining('application/x-www-form-urlencoded') as unknown,
      }),
    ]);
    expect(imported.auth.oauth).toEqual({
      kind: 'oauth2',
      authorizationUrl: 'https://old.pets.example/oauth/authorize',
      tokenUrl: 'https://old.pets.example/oauth/token',
      refreshUrl: null,
      scopes: { read: 'Read' },
    });
    expect(imported.auth.implicitOnly?.kind).toBe('unsupported');
    expect(imported.auth.basic).toEqual({ kind: 'http_basic' });
  });
});

describe('documents that are not OpenAPI', () => {
  it('refuses each, saying what it is', () => {
    const cases: [string, string][] = [
      ['{"openapi": "4.0.0", "info": {}}', 'OpenAPI "4.0.0"'],
      ['{"swagger": "1.2"}', 'not an OpenAPI document'],
      ['{"openapi": ', 'not valid JSON'],
      ['[1, 2]', 'not an object'],
      ['openapi: 3.0.0\nopenapi: 3.0.1\n', 'neither JSON nor valid YAML'],
      ['"just a string"', 'not an object'],
    ];
    for (const [document, message] of cases) {
      const error = refusal(() => importDocument({ document }));
      expect({ document, field: error.field, limit: error.limit, message: error.message }).toEqual({
        document,
        field: 'document',
        limit: null,
        message: expect.stringContaining(message) as unknown,
      });
    }
  });

  it('reads bytes as UTF-8, refusing other bytes', () => {
    const bytes = new TextEncoder().encode(JSON.stringify(petstore30));
    expect(importDocument({ document: bytes }).operations).toHaveLength(8);
    const error = refusal(() => importDocument({ document: new Uint8Array([0x7b, 0xff, 0x7d]) }));
    expect(error.message).toBe('the document is not UTF-8 text');
  });
});
