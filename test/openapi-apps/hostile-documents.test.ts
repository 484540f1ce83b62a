import { describe, expect, it } from '@jest/globals';
import { toolInputIssues } from '../../activities/mcp-apps/tool-input.js';
import {
  IMPORT_LIMITS,
  importDocument,
  importOpenApi,
  OpenApiImportError,
  type ImportLimit,
  type OpenApiImport,
} from '../../activities/openapi-apps/index.js';

/**
 * Documents written to hurt whoever imports them: each is refused naming the limit it goes past,
 * or imported with the hostile part represented without being expanded, and none holds the
 * caller's event loop. No timings are asserted: what is counted is work (ticks of the event loop
 * while the worker thread imports), and what comes back.
 */

type Json = Record<string, unknown>;

function document(paths: Json, schemas: Json = {}, extra: Json = {}): string {
  return JSON.stringify({
    openapi: '3.0.3',
    info: { title: 'Hostile', version: '1' },
    servers: [{ url: 'https://api.hostile.example' }],
    paths,
    components: { schemas },
    ...extra,
  });
}

function posting(schema: unknown, operationId = 'post_it'): Json {
  return {
    post: {
      operationId,
      requestBody: { content: { 'application/json': { schema } } },
      responses: { '200': { description: 'ok' } },
    },
  };
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

async function threadedRefusal(work: () => Promise<unknown>): Promise<OpenApiImportError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof OpenApiImportError) return error;
    throw error;
  }
  throw new Error('the import was not refused');
}

/** Each schema names the next twice: `depth` levels would expand to 2^depth leaves. */
function billionLaughs(depth: number): Json {
  const schemas: Json = {};
  for (let i = 0; i < depth; i++) {
    const next = { $ref: `#/components/schemas/L${String(i + 1)}` };
    schemas[`L${String(i)}`] = { type: 'object', properties: { a: next, b: next } };
  }
  schemas[`L${String(depth)}`] = { type: 'string' };
  return schemas;
}

/** Counts event-loop turns until `work` settles: none if it held the loop all along. */
async function ticksDuring<T>(work: () => Promise<T>): Promise<{ ticks: number; result: T }> {
  let ticks = 0;
  const ticker = setInterval(() => {
    ticks++;
  }, 1);
  try {
    const result = await work();
    return { ticks, result };
  } finally {
    clearInterval(ticker);
  }
}

function limitOf(error: OpenApiImportError): { field: string; limit: ImportLimit | null } {
  return { field: error.field, limit: error.limit };
}

describe('reference cycles', () => {
  it('keeps a cycle of schemas once in $defs, never expanding it', () => {
    const imported = importDocument({
      document: document(
        { '/a': posting({ $ref: '#/components/schemas/A' }) },
        {
          A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } },
          B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' } } },
        },
      ),
    });
    const [operation] = imported.operations;
    expect(operation?.inputSchema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        body: {
          type: 'object',
          properties: {
            b: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } },
          },
        },
      },
      $defs: {
        A: {
          type: 'object',
          properties: { b: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } } },
        },
      },
    });
  });

  it('skips an operation whose schema is nothing but a reference to itself', () => {
    const imported = importDocument({
      document: document(
        { '/self': posting({ $ref: '#/components/schemas/Self' }) },
        { Self: { $ref: '#/components/schemas/Self' } },
      ),
    });
    expect(imported.operations).toEqual([]);
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        name: 'post_it',
        reason: expect.stringContaining('its input schema cannot check input') as unknown,
      }),
    ]);
  });

  it('skips an operation whose parameter is a cycle of references, naming reference_depth', () => {
    const imported = importDocument({
      document: document(
        {
          '/p': {
            get: {
              operationId: 'get_p',
              parameters: [{ $ref: '#/components/parameters/A' }],
              responses: { '200': { description: 'ok' } },
            },
          },
        },
        {},
        {
          components: {
            parameters: {
              A: { $ref: '#/components/parameters/B' },
              B: { $ref: '#/components/parameters/A' },
            },
          },
        },
      ),
    });
    expect(imported.operations).toEqual([]);
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        name: 'get_p',
        limit: 'reference_depth',
        reason:
          'a parameter is reached through more than 32 references in a row (or a cycle of them)',
      }),
    ]);
  });

  it('skips an operation whose references nest deeper than the limit, naming reference_depth', () => {
    const schemas: Json = {};
    const depth = IMPORT_LIMITS.referenceDepth + 5;
    for (let i = 0; i < depth; i++) {
      // One level of nesting each: the references run out before the depth does.
      schemas[`D${String(i)}`] = {
        type: 'array',
        items: { $ref: `#/components/schemas/D${String(i + 1)}` },
      };
    }
    schemas[`D${String(depth)}`] = { type: 'string' };
    const imported = importDocument({
      document: document({ '/d': posting({ $ref: '#/components/schemas/D0' }) }, schemas),
    });
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        name: 'post_it',
        limit: 'reference_depth',
        reason:
          'its input schema expands references more than 32 deep (at "#/components/schemas/D32")',
      }),
    ]);
  });
});

describe('a billion laughs of $refs', () => {
  it('skips its operation at the node budget, having built no more than it', () => {
    // 2^30 leaves if expanded (within the reference depth); stopped after
    // IMPORT_LIMITS.schemaNodes nodes.
    const text = document(
      {
        '/laugh': posting({ $ref: '#/components/schemas/L0' }),
        '/fine': posting({ type: 'object' }, 'fine'),
      },
      billionLaughs(30),
    );
    const imported = importDocument({ document: text });
    expect(imported.operations.map((operation) => operation.name)).toEqual(['fine']);
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        name: 'post_it',
        limit: 'schema_nodes',
        reason:
          'its input schema would hold more than 20000 schema nodes with its references expanded',
      }),
    ]);
  });

  it('refuses a document of many, at the import-wide budget, in the worker, with the event loop turning', async () => {
    const count = IMPORT_LIMITS.importNodes / IMPORT_LIMITS.schemaNodes + 1;
    const paths = Object.fromEntries(
      Array.from({ length: count }, (_, i) => [
        `/laugh${String(i)}`,
        posting({ $ref: '#/components/schemas/L0' }, `laugh${String(i)}`),
      ]),
    );
    const text = document(paths, billionLaughs(30));
    const { ticks, result } = await ticksDuring(() =>
      threadedRefusal(() => importOpenApi({ document: text })),
    );
    expect(limitOf(result)).toEqual({ field: 'document', limit: 'import_nodes' });
    expect(ticks).toBeGreaterThan(0);
  });

  it('is imported when the allow-list leaves its operation out: nothing else reads it', () => {
    const text = document(
      {
        '/laugh': posting({ $ref: '#/components/schemas/L0' }),
        '/fine': posting({ type: 'object' }, 'fine'),
      },
      billionLaughs(40),
    );
    const imported = importDocument({ document: text, allowlist: ['fine'] });
    expect(imported.operations.map((operation) => operation.name)).toEqual(['fine']);
  });

  it('a small one under the budget is expanded in full', () => {
    const imported = importDocument({
      document: document(
        { '/laugh': posting({ $ref: '#/components/schemas/L0' }) },
        billionLaughs(3),
      ),
    });
    const body = (imported.operations[0]?.inputSchema.properties as Json).body;
    expect(JSON.stringify(body).match(/"type":"string"/g)).toHaveLength(8);
  });
});

describe('size', () => {
  it('refuses a 50 MB document by its size before parsing or starting a worker', async () => {
    // Not even JSON: it is never read.
    const huge = `{"openapi":"3.0.3","x":"${'a'.repeat(50 * 1024 * 1024)}"`;
    const error = await threadedRefusal(() => importOpenApi({ document: huge }));
    expect(limitOf(error)).toEqual({ field: 'document', limit: 'document_bytes' });
    expect(error.message).toBe(
      'the document is 50.0 MiB, more than the 32.0 MiB an OpenAPI document may be',
    );
    const bytes = Buffer.from(huge);
    expect(limitOf(refusal(() => importDocument({ document: bytes })))).toEqual({
      field: 'document',
      limit: 'document_bytes',
    });
  });

  it('refuses more operations than the limit', () => {
    const paths = Object.fromEntries(
      Array.from({ length: IMPORT_LIMITS.operations + 1 }, (_, i) => [
        `/o${String(i)}`,
        { get: { responses: { '200': { description: 'ok' } } } },
      ]),
    );
    const error = refusal(() => importDocument({ document: document(paths) }));
    expect(limitOf(error)).toEqual({ field: 'document', limit: 'operations' });
  });
});

describe('nesting', () => {
  it('refuses JSON nested deeper than the limit before parsing it', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const text = `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"x-deep":${deep},"paths":{}}`;
    expect(limitOf(refusal(() => importDocument({ document: text })))).toEqual({
      field: 'document',
      limit: 'document_depth',
    });
  });

  it('refuses YAML nested deeper than the limit', () => {
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const text = `openapi: 3.0.3\ninfo: {title: x, version: "1"}\nx-deep: ${deep}\npaths: {}\n`;
    expect(limitOf(refusal(() => importDocument({ document: text })))).toEqual({
      field: 'document',
      limit: 'document_depth',
    });
  });

  it("refuses a YAML alias bomb (YAML's own billion laughs)", () => {
    const lines = ['openapi: 3.0.3', 'info: {title: x, version: "1"}', 'paths: {}', 'x-bomb:'];
    lines.push('  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]');
    for (let i = 1; i < 12; i++) {
      const previous = `*a${String(i - 1)}`;
      lines.push(`  a${String(i)}: &a${String(i)} [${Array(10).fill(previous).join(', ')}]`);
    }
    const error = refusal(() => importDocument({ document: lines.join('\n') }));
    expect(limitOf(error)).toEqual({ field: 'document', limit: 'yaml_aliases' });
  });

  it('skips an operation whose schema nests deeper than the limit once built', () => {
    // Within the document's own nesting limit, past the input schema's.
    let schema: Json = { type: 'string' };
    for (let i = 0; i < IMPORT_LIMITS.schemaDepth + 5; i++)
      schema = { type: 'array', items: schema };
    const imported = importDocument({ document: document({ '/n': posting(schema) }) });
    expect(imported.skipped).toEqual([
      expect.objectContaining({ name: 'post_it', limit: 'schema_depth' }),
    ]);
  });
});

describe('references the importer does not follow', () => {
  it('skips an operation that references another document, fetching nothing', () => {
    const imported = importDocument({
      document: document({
        '/x': posting({ $ref: 'http://169.254.169.254/latest/meta-data.json#/x' }),
        '/y': posting({ $ref: '#/components/schemas/Missing' }, 'missing'),
        '/z': posting({ $ref: '#anchor' }, 'anchored'),
      }),
    });
    expect(imported.operations).toEqual([]);
    expect(imported.skipped.map(({ name, reason }) => [name, reason])).toEqual([
      [
        'post_it',
        'it references "http://169.254.169.254/latest/meta-data.json#/x" in another document, which Gatehouse does not fetch (only references within the document, "#/…")',
      ],
      ['missing', 'it references "#/components/schemas/Missing", which the document does not hold'],
      [
        'anchored',
        'it uses the reference "#anchor", an anchor, which Gatehouse does not resolve (only JSON pointers within the document, "#/…")',
      ],
    ]);
  });
});

describe('names that are JavaScript members', () => {
  it('are plain names: nothing is polluted, and each is kept', () => {
    const text = `{"openapi":"3.0.3","info":{"title":"x","version":"1"},
      "servers":[{"url":"https://api.hostile.example"}],
      "paths":{"/p/{__proto__}":{"post":{"operationId":"__proto__",
        "parameters":[{"name":"__proto__","in":"path","required":true,"schema":{"type":"string"}},
                      {"name":"constructor","in":"query","schema":{"type":"string"}}],
        "requestBody":{"content":{"application/json":{"schema":{"type":"object",
          "properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}}}},
        "responses":{"200":{"description":"ok"}}}}}}`;
    const imported: OpenApiImport = importDocument({ document: text });
    expect(({} as Json).type).toBeUndefined();
    const [operation] = imported.operations;
    expect(operation?.name).toBe('proto');
    const properties = operation?.inputSchema.properties as Json;
    const path = properties.path as { properties: Json };
    expect(Object.hasOwn(path.properties, '__proto__')).toBe(true);
    const body = properties.body as { properties: Json };
    expect(Object.hasOwn(body.properties, '__proto__')).toBe(true);
  });
});

describe('a catastrophic pattern', () => {
  const imported = importDocument({
    document: document({
      '/search': {
        get: {
          operationId: 'search',
          parameters: [
            {
              name: 'q',
              in: 'query',
              required: true,
              schema: { type: 'string', pattern: '^(a+)+$' },
            },
          ],
          responses: { '200': { description: 'ok' } },
        },
      },
    }),
  });

  it('imports (compiling runs no pattern), and an input that backtracks is refused within its budget while the event loop turns', async () => {
    const [search] = imported.operations;
    if (!search) throw new Error('not imported');
    expect(await toolInputIssues(search.inputSchema, { query: { q: 'aaaa' } })).toEqual([]);
    const evil = { query: { q: `${'a'.repeat(40)}!` } };
    const { ticks, result } = await ticksDuring(() => toolInputIssues(search.inputSchema, evil));
    expect(result).toEqual([
      {
        path: 'input',
        message: expect.stringContaining('a pattern that backtracks on it') as unknown,
      },
    ]);
    expect(ticks).toBeGreaterThan(0);
  });

  it('a pattern JavaScript cannot compile skips its operation, saying so', () => {
    const broken = importDocument({
      document: document({
        '/b': {
          get: {
            operationId: 'broken',
            parameters: [{ name: 'q', in: 'query', schema: { type: 'string', pattern: '(?<' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      }),
    });
    expect(broken.skipped).toEqual([
      expect.objectContaining({
        name: 'broken',
        reason: expect.stringContaining('its input schema cannot check input') as unknown,
      }),
    ]);
  });
});

describe('a large document in the worker', () => {
  it('leaves the event loop turning while it imports', async () => {
    const schemas: Json = {};
    const paths: Json = {};
    for (let i = 0; i < 1_500; i++) {
      schemas[`S${String(i)}`] = {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 30 }, (_, p) => [
            `p${String(p)}`,
            { type: 'string', maxLength: 10 },
          ]),
        ),
      };
      paths[`/things${String(i)}/{id}`] = {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        put: {
          operationId: `putThing${String(i)}`,
          requestBody: {
            content: {
              'application/json': { schema: { $ref: `#/components/schemas/S${String(i)}` } },
            },
          },
          responses: { '200': { description: 'ok' } },
        },
      };
    }
    const { ticks, result } = await ticksDuring(() =>
      importOpenApi({ document: document(paths, schemas) }),
    );
    expect(result.operations).toHaveLength(1_500);
    expect(result.operations[0]?.name).toBe('put_thing0');
    // Held on this thread, the import would have let no interval run at all.
    expect(ticks).toBeGreaterThan(10);
  });
});
