import { beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES, type ErrorCode } from '../../workflows/error-codes.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
});

interface Example {
  summary: string;
  value: { error: { code: ErrorCode; message: string; retryable: boolean } };
}

interface Response {
  description: string;
  content?: { 'application/json'?: { examples?: Record<string, Example> } };
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  security: Record<string, string[]>[];
  'x-service-scopes': string[];
  'x-service-mcp': string;
  'x-service-audience': string;
  responses: Record<string, Response>;
}

interface Document {
  openapi: string;
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
}

async function documentAt(path: string): Promise<Document> {
  const response = await fetch(`${api.url}${path}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Document;
}

const DOCUMENTS = [
  '/openapi/docs.json',
  '/openapi/connected-users.json',
  '/openapi/management.json',
] as const;

function operationsOf(document: Document): [string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, Operation] => [
      `${method.toUpperCase()} ${path}`,
      op,
    ]),
  );
}

/** Every string under `value` at a key named `key`, with where it sits. */
function stringsAt(value: unknown, key: string, where = '$'): [string, string][] {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => stringsAt(item, key, `${where}[${String(index)}]`));
  }
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([name, child]): [string, string][] => [
    ...(name === key && typeof child === 'string'
      ? [[`${where}.${name}`, child] as [string, string]]
      : []),
    ...stringsAt(child, key, `${where}.${name}`),
  ]);
}

describe('OpenAPI documents and /docs', () => {
  it('serves the management document as OpenAPI 3.1 with each operation described', async () => {
    const doc = await documentAt('/openapi/management.json');
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'management API', version: '1.0.0' });
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'bearerKey']);
    const get = doc.paths['/v1/funded-access']?.get;
    expect(get).toMatchObject({
      operationId: 'get_funded_access',
      tags: ['Management'],
      'x-service-scopes': ['funded_access:read'],
      'x-service-mcp': 'read',
      'x-service-audience': 'business',
      security: [{ apiKey: [] }, { bearerKey: [] }],
    });
    expect(Object.keys(get?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '410',
      '429',
      '500',
    ]);
    expect(doc.paths['/v1/funded-access']?.put).toMatchObject({
      operationId: 'set_funded_access',
      'x-service-scopes': ['funded_access:manage'],
      'x-service-mcp': 'proposal',
    });
  });

  it('serves the connected-user document and the interactive docs without a key', async () => {
    const doc = await documentAt('/openapi/connected-users.json');
    expect(doc.openapi).toBe('3.1.0');
    const docs = await fetch(`${api.url}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui');
  });

  it('opens /docs on both interfaces by resource, connected-user operations first', async () => {
    const init = await (await fetch(`${api.url}/docs/swagger-ui-init.js`)).text();
    const urls = [...init.matchAll(/"url": "([^"]+)"/g)].map((match) => match[1]);
    expect(urls).toEqual([
      '/openapi/docs.json',
      '/openapi/connected-users.json',
      '/openapi/management.json',
    ]);

    const docs = await documentAt('/openapi/docs.json');
    const tags = (docs.tags ?? []).map((tag) => tag.name);
    expect(tags.slice(0, 6)).toEqual([
      'Connect links',
      'Users',
      'Connections',
      'Actions',
      'Proxy',
      'Approvals',
    ]);
    expect(tags).toEqual(
      expect.arrayContaining(['Audit', 'Policies', 'Webhooks', 'MCP', 'Apps', 'Auth configs']),
    );
    // Every operation of both interfaces, each once: the management inbox and read of an
    // approval are the connected-user ones, which answer a business key in its shape.
    const ids = operationsOf(docs).map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const management = operationsOf(await documentAt('/openapi/management.json'));
    const connected = operationsOf(await documentAt('/openapi/connected-users.json'));
    expect(ids.length).toBe(connected.length + management.length - 2);
    expect(ids).toEqual(expect.arrayContaining(['decide_approval', 'create_auth_config']));
  });

  it.each(DOCUMENTS)('%s is valid OpenAPI 3.1', async (path) => {
    const validator = new Validator();
    const result = await validator.validate(
      (await documentAt(path)) as unknown as Record<string, unknown>,
    );
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every operation under a resource tag the document describes', async () => {
    for (const path of ['/openapi/docs.json', '/openapi/connected-users.json']) {
      const doc = await documentAt(path);
      const described = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
      const untagged = operationsOf(doc)
        .filter(
          ([, op]) => op.tags?.length !== 1 || (described.get(op.tags[0] ?? '') ?? '').length < 40,
        )
        .map(([name, op]) => `${name} ${JSON.stringify(op.tags)}`);
      expect(untagged).toEqual([]);
    }
    // Every management operation keeps the interface's one tag, Management.
    for (const [, op] of operationsOf(await documentAt('/openapi/management.json'))) {
      expect(op.tags).toEqual(['Management']);
    }
  });

  it('writes for API users: no description cites internal documents or issues', async () => {
    for (const path of DOCUMENTS) {
      const doc = await documentAt(path);
      const texts = [...stringsAt(doc, 'description'), ...stringsAt(doc, 'summary')];
      expect(texts.length).toBeGreaterThan(100);
      const citing = texts.filter(([, text]) => /SPEC\.md|DESIGN\.md|§|\bissue \d+/i.test(text));
      expect(citing).toEqual([]);
    }
  });

  it('gives every error status examples of the codes that status really carries', async () => {
    for (const path of DOCUMENTS) {
      for (const [name, op] of operationsOf(await documentAt(path))) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const examples = Object.values(response.content?.['application/json']?.examples ?? {});
          expect([name, status, examples.length > 0]).toEqual([name, status, true]);
          for (const example of examples) {
            const { code, retryable } = example.value.error;
            expect([name, code, ERROR_CODES[code].status]).toEqual([name, code, Number(status)]);
            expect(retryable).toBe(ERROR_CODES[code].retryable);
            expect(response.description).toContain(`\`${code}\``);
            expect(example.summary.startsWith(`${code}: `)).toBe(true);
            expect(JSON.stringify(example.value)).not.toMatch(/additionalProp|"string"/);
          }
        }
      }
    }
  });

  it('shows the 403s of governed calls: access, held for approval, denied', async () => {
    const doc = await documentAt('/openapi/connected-users.json');
    const codesAt = (path: string, method: string, status: string) =>
      Object.values(
        doc.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.examples ?? {},
      ).map((example) => example.value.error.code);
    for (const [path, method] of [
      ['/v1/actions/{action}/run', 'post'],
      ['/v1/proxy/{app}/{path}', 'get'],
      ['/v1/proxy/{app}/{path}', 'delete'],
    ] as const) {
      expect(new Set(codesAt(path, method, '403'))).toEqual(
        new Set(['insufficient_access', 'approval_required', 'denied_by_policy']),
      );
      expect(codesAt(path, method, '409')).toEqual(
        expect.arrayContaining(['connection_required', 'connection_expired']),
      );
      expect(codesAt(path, method, '429')).toEqual(
        expect.arrayContaining(['rate_limited', 'upstream_rate_limited']),
      );
    }
    // Elsewhere a 403 is only ever the key's access.
    expect(codesAt('/v1/policies/{id}', 'put', '403')).toEqual(['insufficient_access']);
    // A read any key may do has no 403 to show.
    expect(doc.paths['/v1/users']?.get?.responses['403']).toBeUndefined();

    const approve = doc.paths['/v1/approvals/{id}/approve']?.post;
    const refusals = Object.values(
      approve?.responses['403']?.content?.['application/json']?.examples ?? {},
    ).map((example) => example.value.error.message);
    expect(refusals.join('\n')).toMatch(/lacks the scope "approvals:decide"/);
    expect(refusals.join('\n')).toMatch(/can never decide its own approval/);
    expect(codesAt('/v1/approvals/{id}/approve', 'post', '409')).toContain('conflict');
  });

  it('explains both ways to decide an approval, and the hosted page for people', async () => {
    const docs = await documentAt('/openapi/docs.json');
    const approvals = docs.tags?.find((tag) => tag.name === 'Approvals')?.description ?? '';
    for (const phrase of [
      'POST /v1/approvals/{id}/approve',
      'POST /v1/approvals/{id}/reject',
      'POST /v1/approvals/{approvalId}/decision',
      'approvals:decide',
      'approval.requested',
      'same call again',
      'hosted approval page',
    ]) {
      expect(approvals).toContain(phrase);
    }
    const tagOf = (path: string, method: string) => docs.paths[path]?.[method]?.tags;
    expect(tagOf('/v1/approvals/{approvalId}/decision', 'post')).toEqual(['Approvals']);
    expect(tagOf('/v1/approvals/{id}/approve', 'post')).toEqual(['Approvals']);
  });
});
