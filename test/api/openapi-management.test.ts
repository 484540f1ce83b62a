import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

interface Operation {
  operationId: string;
  tags: string[];
  security: Record<string, string[]>[];
  'x-service-scopes': string[];
  'x-service-mcp': string;
  'x-service-audience': string;
  parameters?: Parameter[];
  requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, { content?: { 'application/json': { schema: Schema } } }>;
}

interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  writeOnly?: boolean;
  required?: string[];
}

interface Document {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

let doc: Document;

/** The management operations, row by row: method, path, operationId, scope, MCP class. */
const OPERATIONS = [
  ['get', '/v1/funded-access', 'get_funded_access', 'funded_access:read', 'read'],
  ['put', '/v1/funded-access', 'set_funded_access', 'funded_access:manage', 'proposal'],
  ['get', '/v1/mcp-oauth-clients', 'get_mcp_oauth_settings', 'auth_configs:read', 'read'],
  ['post', '/v1/mcp-oauth-clients', 'create_mcp_oauth_client', 'auth_configs:manage', 'proposal'],
  [
    'post',
    '/v1/mcp-oauth-clients/{id}/rotate',
    'rotate_mcp_oauth_client',
    'auth_configs:manage',
    'proposal',
  ],
  [
    'post',
    '/v1/mcp-oauth-clients/{id}/retire',
    'retire_mcp_oauth_client',
    'auth_configs:manage',
    'proposal',
  ],
  [
    'post',
    '/v1/mcp-oauth-clients/{id}/select',
    'select_mcp_oauth_client',
    'auth_configs:manage',
    'proposal',
  ],
  [
    'put',
    '/v1/mcp-client-branding',
    'update_mcp_client_branding',
    'auth_configs:manage',
    'proposal',
  ],
  ['post', '/v1/auth-configs', 'create_auth_config', 'auth_configs:manage', 'proposal'],
  ['get', '/v1/auth-configs', 'list_auth_configs', 'auth_configs:read', 'read'],
  [
    'post',
    '/v1/auth-configs/{id}/disable',
    'disable_auth_config',
    'auth_configs:manage',
    'proposal',
  ],
  ['get', '/v1/approvals/{approvalId}', 'get_approval', 'approvals:read', 'read'],
  // Beyond the original fifteen: the approvers' inbox, where the people who decide find the
  // approvals waiting on them.
  ['get', '/v1/approvals', 'list_approvals', 'approvals:read', 'read'],
  [
    'post',
    '/v1/approvals/{approvalId}/decision',
    'decide_approval',
    'approvals:decide',
    'proposal',
  ],
  ['get', '/v1/connect-settings', 'get_connect_settings', 'connect_settings:read', 'read'],
  ['put', '/v1/connect-settings', 'update_connect_branding', 'connect_settings:manage', 'proposal'],
  // Beyond the original fifteen: remote MCP servers registered as apps.
  ['post', '/v1/mcp-apps', 'register_mcp_app', 'apps:manage', 'proposal'],
  ['get', '/v1/mcp-apps', 'list_mcp_apps', 'apps:read', 'read'],
  ['get', '/v1/mcp-apps/{app}', 'get_mcp_app', 'apps:read', 'read'],
  ['patch', '/v1/mcp-apps/{app}', 'update_mcp_app', 'apps:manage', 'proposal'],
  ['delete', '/v1/mcp-apps/{app}', 'delete_mcp_app', 'apps:manage', 'proposal'],
  ['post', '/v1/mcp-apps/{app}/refresh', 'refresh_mcp_app', 'apps:manage', 'proposal'],
  ['post', '/v1/mcp-apps/{app}/accept', 'accept_mcp_app_snapshot', 'apps:manage', 'proposal'],
  ['post', '/v1/openapi-apps', 'register_openapi_app', 'apps:manage', 'proposal'],
  ['get', '/v1/openapi-apps', 'list_openapi_apps', 'apps:read', 'read'],
  ['get', '/v1/openapi-apps/{app}', 'get_openapi_app', 'apps:read', 'read'],
  ['patch', '/v1/openapi-apps/{app}', 'update_openapi_app', 'apps:manage', 'proposal'],
  ['delete', '/v1/openapi-apps/{app}', 'delete_openapi_app', 'apps:manage', 'proposal'],
  ['post', '/v1/openapi-apps/{app}/refresh', 'refresh_openapi_app', 'apps:manage', 'proposal'],
  [
    'post',
    '/v1/openapi-apps/{app}/accept',
    'accept_openapi_app_snapshot',
    'apps:manage',
    'proposal',
  ],
  // Beyond the original fifteen: which of the identity provider's groups hold which role.
  ['get', '/v1/role-mappings', 'list_role_mappings', 'people:read', 'read'],
  ['put', '/v1/role-mappings/{group}', 'set_role_mapping', 'people:manage', 'proposal'],
  ['delete', '/v1/role-mappings/{group}', 'delete_role_mapping', 'people:manage', 'proposal'],
  // Beyond the original fifteen: where approvers are told of held calls.
  ['get', '/v1/notification-channels', 'list_notification_channels', 'notifications:read', 'read'],
  [
    'put',
    '/v1/notification-channels/{kind}',
    'set_notification_channel',
    'notifications:manage',
    'proposal',
  ],
  [
    'delete',
    '/v1/notification-channels/{kind}',
    'delete_notification_channel',
    'notifications:manage',
    'proposal',
  ],
  ['get', '/v1/notification-routes', 'list_notification_routes', 'notifications:read', 'read'],
  [
    'put',
    '/v1/notification-routes/{audience}/{kind}',
    'set_notification_routes',
    'notifications:manage',
    'proposal',
  ],
  [
    'delete',
    '/v1/notification-routes/{audience}/{kind}',
    'delete_notification_routes',
    'notifications:manage',
    'proposal',
  ],
  ['get', '/v1/notification-opt-outs', 'list_notification_opt_outs', 'notifications:read', 'read'],
  [
    'put',
    '/v1/notification-opt-outs/{email}/{kind}',
    'set_notification_opt_out',
    'notifications:manage',
    'proposal',
  ],
  [
    'delete',
    '/v1/notification-opt-outs/{email}/{kind}',
    'delete_notification_opt_out',
    'notifications:manage',
    'proposal',
  ],
] as const;

function resolve(schema: Schema | undefined): Schema {
  if (!schema?.$ref) return schema ?? {};
  const name = schema.$ref.replace('#/components/schemas/', '');
  return doc.components.schemas[name] ?? {};
}

/** Every object schema reachable from `schema`, for checks that must hold at every depth. */
function objects(schema: Schema | undefined, seen = new Set<Schema>()): Schema[] {
  const resolved = resolve(schema);
  if (seen.has(resolved)) return [];
  seen.add(resolved);
  const nested = Object.values(resolved.properties ?? {}).flatMap((child) => objects(child, seen));
  return resolved.type === 'object' ? [resolved, ...nested] : nested;
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  doc = (await (await fetch(`${api.url}/openapi/management.json`)).json()) as Document;
});

describe('the management document', () => {
  it('is titled "management API" 1.0.0 and has exactly the original fifteen operations, the approvers inbox, the remote MCP apps, the OpenAPI apps and the role mappings', () => {
    expect(doc.info).toMatchObject({ title: 'management API', version: '1.0.0' });
    const ids = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).map((op) => op.operationId),
    );
    expect(ids.sort()).toEqual(OPERATIONS.map((row) => row[2]).sort());
  });

  it.each(OPERATIONS)('%s %s is %s', (method, path, operationId, scope, mcp) => {
    const operation = doc.paths[path]?.[method];
    expect(operation).toMatchObject({
      operationId,
      tags: ['Management'],
      'x-service-audience': 'business',
      'x-service-scopes': [scope],
      'x-service-mcp': mcp,
      security: [{ apiKey: [] }, { bearerKey: [] }],
    });
    if (!operation) return;
    expect(Object.keys(operation.responses).sort()).toEqual(
      ['200', '400', '401', '403', '404', '409', '410', '429', '500'].sort(),
    );
    for (const status of ['400', '401', '403', '404', '409', '410', '429', '500']) {
      expect(operation.responses[status]?.content?.['application/json'].schema.$ref).toBe(
        '#/components/schemas/Error',
      );
    }
    const ok = resolve(operation.responses['200']?.content?.['application/json'].schema);
    expect(ok.required).toContain('data');
    expect(resolve(ok.properties?.data)).toBeDefined();

    const idempotency = operation.parameters?.find((p) => p.name === 'Idempotency-Key');
    if (method === 'post') {
      expect(idempotency).toMatchObject({ in: 'header', schema: { minLength: 1, maxLength: 200 } });
      expect(idempotency?.required ?? false).toBe(false);
    } else {
      expect(idempotency).toBeUndefined();
    }
    for (const object of objects(operation.requestBody?.content['application/json'].schema)) {
      // A map (`grade_overrides`: tool → grade) has no unknown properties: every key is data,
      // and each value must match its schema.
      if (typeof object.additionalProperties === 'object' && !object.properties) continue;
      expect(object.additionalProperties).toBe(false);
    }
  });

  it('answers every operation as {data: <operationId>_output}, a component of its own', () => {
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    expect(operations.length).toBe(OPERATIONS.length);
    const outputs = operations.map((operation) => {
      const ok = resolve(operation.responses['200']?.content?.['application/json'].schema);
      return [operation.operationId, ok.properties?.data?.$ref] as const;
    });
    expect(outputs).toEqual(
      operations.map(
        (operation) =>
          [operation.operationId, `#/components/schemas/${operation.operationId}_output`] as const,
      ),
    );
    for (const operation of operations) {
      expect(doc.components.schemas[`${operation.operationId}_output`]).toBeDefined();
    }
  });

  it('marks every secret write-only', () => {
    const secrets = [
      ['post', '/v1/mcp-oauth-clients', ['client', 'clientSecret']],
      ['post', '/v1/mcp-oauth-clients/{id}/rotate', ['clientSecret']],
      ['post', '/v1/auth-configs', ['clientSecret']],
    ] as const;
    for (const [method, path, [first, second]] of secrets) {
      const body = resolve(
        doc.paths[path]?.[method]?.requestBody?.content['application/json'].schema,
      );
      const field =
        second === undefined
          ? resolve(body.properties?.[first])
          : resolve(resolve(body.properties?.[first]).properties?.[second]);
      expect(field.writeOnly).toBe(true);
    }
  });

  it('uses the UUID pattern for approval and MCP client ids, and 1–256 for auth config ids', () => {
    const pattern = (path: string, method: string, name: string) =>
      doc.paths[path]?.[method]?.parameters?.find((p) => p.name === name)?.schema;
    for (const [path, method, name] of [
      ['/v1/approvals/{approvalId}', 'get', 'approvalId'],
      ['/v1/mcp-oauth-clients/{id}/rotate', 'post', 'id'],
    ] as const) {
      const schema = pattern(path, method, name) as { pattern?: string } | undefined;
      const regex = new RegExp(schema?.pattern ?? '^$');
      expect(regex.test('019a0000-0000-7000-8000-000000000000')).toBe(true);
      expect(regex.test('00000000-0000-0000-0000-000000000000')).toBe(true);
      expect(regex.test('ffffffff-ffff-ffff-ffff-ffffffffffff')).toBe(true);
      expect(regex.test('019a0000-0000-9000-8000-000000000000')).toBe(false);
    }
    expect(pattern('/v1/auth-configs/{id}/disable', 'post', 'id')).toMatchObject({
      minLength: 1,
      maxLength: 256,
    });
  });
});
