import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Scope } from '../../activities/db/api-keys.js';
import { ERROR_CODES, type ErrorCode } from '../../workflows/error-codes.js';
import type { Requirement } from '../http/authorize.js';
import { idempotencyHeader } from '../http/idempotency.js';
import { accessRefusal, type ErrorExample } from './error-examples.js';
import { errorResponses, type ErrorSpec, type ErrorStatus } from './error-responses.js';
import { tagOf } from './tags.js';

export type { ErrorExample } from './error-examples.js';
export type { ErrorSpec } from './error-responses.js';

/**
 * The two OpenAPI documents, collected from the same zod schemas the routes validate with: each
 * route file registers its operations here as it defines them.
 */
export const managementRegistry = new OpenAPIRegistry();
export const connectedUsersRegistry = new OpenAPIRegistry();

const errorCodes = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorSchema = z
  .object({
    error: z
      .object({
        code: z.enum(errorCodes).meta({ description: 'What went wrong, for programs to act on' }),
        message: z.string().meta({ description: 'What went wrong and what to do, for people' }),
        retryable: z
          .boolean()
          .meta({ description: 'Whether sending the same request again can succeed' }),
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
          .meta({ description: 'With `invalid_request`: every problem found in the request.' }),
      })
      // Open: a code may carry more context (`approval`, `reconnect_url`, `upstream_status`, …).
      .catchall(z.unknown())
      .meta({
        description:
          'Besides `code`, `message` and `retryable`, some codes carry fields of their own: `approval` with `approval_required`, `reconnect_url` with `connection_expired`, `upstream_status` with the `upstream_*` codes, `required_scope` or `required_access` with `insufficient_access`.',
      }),
  })
  .meta({ id: 'Error', description: 'The body of every failed request.' });

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

/** Every POST takes an optional `Idempotency-Key`, except calls, which declare their own headers. */
function withIdempotencyKey(
  method: string,
  request: RouteConfig['request'],
): RouteConfig['request'] | undefined {
  if (method !== 'post' || request?.headers) return request;
  return { ...request, headers: idempotencyHeader.partial() };
}

function takesIdempotencyKey(method: string, request: RouteConfig['request']): boolean {
  return method === 'post' && !request?.headers;
}

/**
 * What every authenticated request can meet, whatever the operation: a malformed query, a
 * missing or wrong key, the rate limits, and our own failures.
 */
const EVERY_REQUEST: readonly ErrorSpec[] = [
  'invalid_request',
  'invalid_api_key',
  'rate_limited',
  'internal_error',
];

function impliedBy(method: string, request: RouteConfig['request']): ErrorSpec[] {
  return [
    ...EVERY_REQUEST,
    ...(takesIdempotencyKey(method, request)
      ? (['conflict', 'idempotency_key_reused'] as const)
      : []),
    ...(request?.body ? (['payload_too_large', 'unsupported_media_type'] as const) : []),
  ];
}

function withDescription(summary: string, description: string | undefined, extra?: string) {
  const text = [description, extra].filter((part) => part !== undefined).join('\n\n');
  return { summary, ...(text ? { description: text } : {}) };
}

export interface ManagementOperation {
  method: 'get' | 'put' | 'post' | 'patch' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  /** Markdown beyond the summary, for the API's users. */
  description?: string;
  scope: Scope;
  request?: RouteConfig['request'];
  /** What `data` holds; its component is named `<operationId>_output` here, whatever it was named. */
  output: z.ZodType;
  /** Fields beside `data` in the answer (a list's `nextCursor`). */
  envelope?: Record<string, z.ZodType>;
  /** Codes this operation answers beyond those every one does (`conflict`, `not_found`, …). */
  errors?: readonly ErrorCode[];
  /** This operation's own answers for those codes, as the route builds them. */
  errorExamples?: readonly ErrorExample[];
}

/**
 * The management contract names every operation's success `{data: <operationId>_output}`, so a
 * client generated from the document gets one type per operation, even where two answer the same
 * shape (several MCP app operations answer an `McpApp`): a schema named otherwise is renamed.
 */
function outputComponent(operation: ManagementOperation): z.ZodType {
  const id = `${operation.operationId}_output`;
  return z.globalRegistry.get(operation.output)?.id === id
    ? operation.output
    : operation.output.meta({ id });
}

/** The error statuses every management operation lists, whether or not it can answer them. */
const MANAGEMENT_STATUSES = [400, 401, 403, 404, 409, 410, 429, 500] as const;

/**
 * Every management operation has the same shape, extensions and error statuses; the statuses it
 * cannot answer say so, so a reader does not prepare for what never comes.
 */
export function registerManagementOperation(operation: ManagementOperation): void {
  const request = withIdempotencyKey(operation.method, operation.request);
  const requires: Requirement = {
    operation: operation.method === 'get' ? 'read' : 'write',
    scope: operation.scope,
  };
  const own = operation.errorExamples ?? [];
  const answered = [
    ...impliedBy(operation.method, operation.request),
    'insufficient_access' as const,
    ...(operation.errors ?? []),
    ...own.map((example) => example.error.code),
  ].filter((spec) => MANAGEMENT_STATUSES.some((status) => status === statusOfSpec(spec)));
  const answeredStatuses = new Set(answered.map(statusOfSpec));
  const notes: Partial<Record<ErrorStatus, string>> = {};
  for (const status of MANAGEMENT_STATUSES) {
    if (!answeredStatuses.has(status)) {
      notes[status] =
        'This operation does not answer it; every management operation lists the same statuses.';
    }
  }
  managementRegistry.registerPath({
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    ...withDescription(
      operation.summary,
      operation.description,
      `Needs a key with scope \`${operation.scope}\`. Answers \`{"data": …}\`.`,
    ),
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
            schema: z.object({ data: outputComponent(operation), ...operation.envelope }),
          },
        },
      },
      ...errorResponses(
        [...answered, ...MANAGEMENT_STATUSES],
        {
          request: operation.request,
          requires,
          idempotent: takesIdempotencyKey(operation.method, operation.request),
          own,
          notes,
        },
        errorSchema,
      ),
    },
  });
}

function statusOfSpec(spec: ErrorSpec): number {
  return typeof spec === 'number' ? spec : ERROR_CODES[spec].status;
}

export interface ConnectedUserOperation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  path: string;
  operationId: string;
  summary: string;
  /** Markdown beyond the summary, for the API's users. */
  description?: string;
  request?: RouteConfig['request'];
  response: z.ZodType;
  /** Success status; 200 unless the operation creates something. */
  status?: 200 | 201;
  /**
   * What this operation answers beyond what every request can meet (a bad query or key, the rate
   * limits, our failures, and for POSTs the `Idempotency-Key` conflicts): statuses with their
   * usual code, or the codes themselves.
   */
  errors: readonly ErrorSpec[];
  /** Tags to list it under instead of the one its path gives (see tags.ts). */
  tags?: readonly string[];
  /** The access check of the route, as it passes it to `authorize`: gives its 403, if any. */
  requires?: Requirement;
  /** This operation's own answers for its codes, as the route builds them. */
  errorExamples?: readonly ErrorExample[];
}

/** Every connected-user operation waits on Postgres or Temporal, which may not answer in time. */
const DEPENDENCIES: readonly ErrorSpec[] = ['service_unavailable'];

export function registerConnectedUserOperation(operation: ConnectedUserOperation): void {
  const request = withIdempotencyKey(operation.method, operation.request);
  const tags = operation.tags ?? [tagOf(operation.path)].filter((tag) => tag !== undefined);
  const own = operation.errorExamples ?? [];
  connectedUsersRegistry.registerPath({
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    ...withDescription(operation.summary, operation.description),
    ...(tags.length > 0 ? { tags: [...tags] } : {}),
    security: SECURITY,
    'x-service-audience': 'backend',
    ...(request ? { request } : {}),
    responses: {
      [operation.status ?? 200]: {
        description: operation.status === 201 ? 'Created' : 'OK',
        content: { 'application/json': { schema: operation.response } },
      },
      ...errorResponses(
        [
          ...impliedBy(operation.method, operation.request),
          ...DEPENDENCIES,
          ...operation.errors,
          ...(operation.requires && accessRefusal(operation.requires)
            ? (['insufficient_access'] as const)
            : []),
          ...own.map((example) => example.error.code),
        ],
        {
          request: operation.request,
          ...(operation.requires ? { requires: operation.requires } : {}),
          idempotent: takesIdempotencyKey(operation.method, operation.request),
          own,
        },
        errorSchema,
      ),
    },
  });
}
