import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Scope } from '../../activities/db/api-keys.js';
import { ERROR_CODES } from '../../workflows/error-codes.js';
import { idempotencyHeader } from '../http/idempotency.js';

/**
 * The two OpenAPI documents of SPEC.md, collected from the same zod schemas the routes validate
 * with: each route file registers its operations here as it defines them.
 */
export const managementRegistry = new OpenAPIRegistry();
export const connectedUsersRegistry = new OpenAPIRegistry();

export const errorSchema = z
  .object({
    error: z
      .object({
        code: z.enum(
          Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]],
        ),
        message: z.string(),
        retryable: z.boolean(),
        issues: z
          .array(
            z.object({
              path: z.string().meta({
                description:
                  'The field, parameter or header at fault, dotted when nested (`client.clientId`); `body` for the body as a whole',
              }),
              message: z.string(),
            }),
          )
          .optional()
          .meta({
            description:
              'With `invalid_request` (DESIGN.md §7): every problem found in the request.',
          }),
      })
      // Open: a code may carry more context (`required_scope`, `reconnect_url`, `app`, …).
      .catchall(z.unknown())
      .meta({
        description:
          'Besides `code`, `message` and `retryable`, an error may carry fields of its own code.',
      }),
  })
  .meta({ id: 'Error', description: 'The envelope of every failed call (SPEC.md §7).' });

for (const registry of [managementRegistry, connectedUsersRegistry]) {
  registry.registerComponent('securitySchemes', 'bearerKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key as a bearer token: `Authorization: Bearer gk_<environment>_…`',
  });
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'API key in the `X-API-Key` header.',
  });
}

const SECURITY: Record<string, string[]>[] = [{ apiKey: [] }, { bearerKey: [] }];

const errorStatuses = {
  400: 'Invalid request',
  401: 'Missing, wrong, revoked or other-environment key (`invalid_api_key`)',
  403: 'The key lacks the access level or scope (`insufficient_access`)',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'A request or app response body over the size limit',
  429: 'Rate limited (by Gatehouse, or `upstream_rate_limited`)',
  500: 'Internal error',
  503: 'The app is unavailable (`upstream_unavailable`)',
  504: 'The app did not answer in time (`upstream_timeout`)',
} as const;

function errorResponses(
  statuses: readonly (keyof typeof errorStatuses)[],
): RouteConfig['responses'] {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: errorStatuses[status],
        content: { 'application/json': { schema: errorSchema } },
      },
    ]),
  );
}

export interface ManagementOperation {
  method: 'get' | 'put' | 'post';
  path: string;
  operationId: string;
  summary: string;
  scope: Scope;
  request?: RouteConfig['request'];
  output: z.ZodType;
  /** Fields beside `data` in the answer (a list's `nextCursor`). */
  envelope?: Record<string, z.ZodType>;
}

/** SPEC.md §4.2: every management operation has the same shape, extensions and error statuses. */
/** DESIGN.md §7: every POST takes an optional `Idempotency-Key`. */
function withIdempotencyKey(
  method: string,
  request: RouteConfig['request'],
): RouteConfig['request'] | undefined {
  if (method !== 'post' || request?.headers) return request;
  return { ...request, headers: idempotencyHeader.partial() };
}

export function registerManagementOperation(operation: ManagementOperation): void {
  const request = withIdempotencyKey(operation.method, operation.request);
  managementRegistry.registerPath({
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    summary: operation.summary,
    tags: ['Management'],
    security: SECURITY,
    'x-service-audience': 'business',
    'x-service-scopes': [operation.scope],
    'x-service-mcp': operation.method === 'get' ? 'read' : 'proposal',
    ...(request ? { request } : {}),
    responses: {
      200: {
        description: 'OK',
        content: {
          'application/json': {
            schema: z.object({ data: operation.output, ...operation.envelope }),
          },
        },
      },
      ...errorResponses([400, 401, 403, 404, 409, 410, 429, 500]),
    },
  });
}

export interface ConnectedUserOperation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  path: string;
  operationId: string;
  summary: string;
  request?: RouteConfig['request'];
  response: z.ZodType;
  /** Success status; 200 unless the operation creates something. */
  status?: 200 | 201;
  errors: readonly (keyof typeof errorStatuses)[];
}

export function registerConnectedUserOperation(operation: ConnectedUserOperation): void {
  const request = withIdempotencyKey(operation.method, operation.request);
  connectedUsersRegistry.registerPath({
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    summary: operation.summary,
    security: SECURITY,
    'x-service-audience': 'backend',
    ...(request ? { request } : {}),
    responses: {
      [operation.status ?? 200]: {
        description: operation.status === 201 ? 'Created' : 'OK',
        content: { 'application/json': { schema: operation.response } },
      },
      ...errorResponses(operation.errors),
    },
  });
}
