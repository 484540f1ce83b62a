import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let api: TestApi;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig(db.url), db.sql);
});

afterAll(async () => {
  await api.close();
  await db.drop();
});

interface Operation {
  operationId: string;
  tags: string[];
  security: Record<string, string[]>[];
  'x-service-scopes': string[];
  'x-service-mcp': string;
  'x-service-audience': string;
  responses: Record<string, unknown>;
}

describe('OpenAPI documents and /docs', () => {
  it('serves the management document as OpenAPI 3.1 with each operation described', async () => {
    const response = await fetch(`${api.url}/openapi/management.json`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, unknown> };
    };
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
    const doc = (await (await fetch(`${api.url}/openapi/connected-users.json`)).json()) as {
      openapi: string;
    };
    expect(doc.openapi).toBe('3.1.0');
    const docs = await fetch(`${api.url}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui');
  });
});
