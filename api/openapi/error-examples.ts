import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Caller } from '../../activities/db/api-keys.js';
import {
  answerDenied,
  answerHeld,
  answerRejected,
  answerStopped,
  answerTooLarge,
} from '../../workflows/call-answers.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import { deciderRefusal } from '../../workflows/decider-rules.js';
import { ERROR_CODES, type ErrorCode, type ErrorEnvelope } from '../../workflows/error-codes.js';
import {
  upstreamFailure,
  withWriteUncertainty,
  type Settled,
} from '../../workflows/upstream-answer.js';
import {
  ApiError,
  ConflictError,
  InsufficientAccessError,
  InvalidApiKeyError,
  InvalidRequestError,
  internalError,
  NotFoundError,
  ServiceUnavailableError,
} from '../errors.js';
import { checkAccess, type Requirement } from '../http/authorize.js';
import { notJsonMediaType } from '../http/json-body.js';
import { parse, type Location } from '../http/validate.js';

/**
 * The error examples of the API documents. Wherever the service has a function that builds an
 * answer (the call workflow's refusals, the access check, request validation), the example is
 * that function's output, so the documents show what a caller really gets and cannot drift.
 */

/** One example answer; `when` names the situation in the documents' example menu. */
export interface ErrorExample {
  when: string;
  error: ApiError;
}

/** What the generated examples of an operation depend on. */
export interface ExampleContext {
  request?: RouteConfig['request'];
  requires?: Requirement;
  /** The shared `Idempotency-Key` handling applies (POSTs without call headers). */
  idempotent: boolean;
}

export const EXAMPLE_APPROVAL: ApprovalView = {
  id: '0198f2c4-7a1e-7c3b-9f21-5d0e8a6b4c12',
  status: 'pending',
  requested_from: ['admin'],
  action: 'acme.create_task',
  scope: 'write',
  agent_id: 'demo-agent',
  user: 'u_123',
  request: { action: 'acme.create_task', user: 'u_123', via: 'api', input: { title: 'Ship it' } },
  policy: { id: 'default', version: 2, rule: 'rule (app acme, scope write)' },
  created_at: '2025-06-01T09:30:00.000Z',
  expires_at: '2025-06-02T09:30:00.000Z',
  decided_by: null,
  decided_at: null,
};

const CONNECTION_ID = '0198f2b0-11aa-7d42-8e5f-3c9a2b7d6e01';

/** What each code means, for the response descriptions. */
export const MEANINGS: Record<ErrorCode, string> = {
  denied_by_policy:
    'the policy denies this call, or a person rejected its approval; sending it again does not help',
  approval_required:
    "the policy holds this call for a person's approval; it did not run. Send the same call again once `approval.id` is approved",
  connection_required: 'the user has no connection to this app; send them a connect link',
  connection_expired:
    "the app no longer accepts the user's refresh token; send the user to `reconnect_url`",
  upstream_rate_limited: "the app's own API rate-limited the call; retry after a pause",
  upstream_invalid_request: 'the app refused the request as malformed (its own 400)',
  upstream_timeout:
    'the app did not answer in time; for a write, `write_may_have_happened` says whether to check the app before retrying',
  upstream_unavailable: "the app's API is down (its 502 or 503)",
  invalid_api_key: 'no API key, or one that is wrong, revoked or for another environment',
  insufficient_access:
    "the key's access level or scopes do not cover this; the message says what is missing",
  invalid_request:
    '`issues` lists every problem: the field, parameter or header, and what is wrong with it',
  not_found: 'nothing by that id in the environment of your key',
  method_not_allowed: 'the path exists, but not for this method',
  conflict: 'the current state does not allow this; the message says why',
  auth_config_required:
    'no OAuth client for this app yet: add an auth config for it, or enable funded access',
  connection_scope_required:
    'the app (a remote MCP server) needs a permission the user has not granted: send them `reconnect_url`',
  idempotency_key_reused:
    'this `Idempotency-Key` came with a different request before; use a new key for a new request',
  gone: 'the resource is gone for good',
  payload_too_large: 'the request body (or, for calls, the app’s answer) is over the size limit',
  headers_too_large: 'the request headers are too large',
  unsupported_media_type:
    'a body that is not JSON: send bodies with `Content-Type: application/json`, in UTF-8',
  rate_limited: 'too many requests; wait the seconds in `Retry-After`',
  internal_error: 'something failed on our side; retry, and quote `X-Trace-Id` if it persists',
  service_unavailable:
    'a dependency of Gatehouse did not answer in time; the message says whether the request took effect',
};

function settledError(settled: Settled): ApiError {
  const { answer } = settled;
  if (answer.kind !== 'error') throw new Error('an example call answer must be an error');
  return new ApiError(answer.code, answer.message, answer.extra);
}

/** The examples every operation that answers the code shares. */
const GENERIC: Record<ErrorCode, ErrorExample[]> = {
  denied_by_policy: [
    {
      when: 'a deny rule',
      error: settledError(
        answerDenied('default', 'policy default v2: rule (action acme.delete_task) → deny'),
      ),
    },
    {
      when: 'the approval was rejected',
      error: settledError(
        answerRejected({ ...EXAMPLE_APPROVAL, status: 'rejected', decided_by: 'admin' }),
      ),
    },
  ],
  approval_required: [
    {
      when: 'held for approval',
      error: settledError(
        answerHeld(EXAMPLE_APPROVAL, 'policy default v2: rule (app acme, scope write) → ask'),
      ),
    },
  ],
  connection_required: [
    {
      when: 'no connection',
      error: settledError(
        answerStopped({
          ok: false,
          code: 'connection_required',
          connectedUserId: null,
          connectionId: null,
        }),
      ),
    },
  ],
  // The API, not the workflow, adds the link (links never pass through Temporal).
  connection_expired: [
    {
      when: 'the user must reconnect',
      error: new ApiError(
        'connection_expired',
        'The connection to acme has expired: the user must reconnect through reconnect_url.',
        {
          connection_id: CONNECTION_ID,
          reconnect_url: 'https://gatehouse.example.com/connect/9xQw3mZ7vT1kLp4sHa8bRc2dYe6uNf0j',
        },
      ),
    },
  ],
  connection_scope_required: [
    {
      when: 'the user must grant a wider scope',
      error: new ApiError(
        'connection_scope_required',
        'The app needs a permission the user has not granted (scope "issues:write"): they must reconnect through reconnect_url to grant it.',
        {
          connection_id: CONNECTION_ID,
          scope: 'issues:read issues:write',
          reconnect_url: 'https://gatehouse.example.com/connect/9xQw3mZ7vT1kLp4sHa8bRc2dYe6uNf0j',
        },
      ),
    },
  ],
  upstream_rate_limited: [
    { when: "the app's 429", error: settledError(upstreamFailure('upstream_rate_limited', 429)) },
  ],
  upstream_invalid_request: [
    {
      when: "the app's 400",
      error: settledError(upstreamFailure('upstream_invalid_request', 400)),
    },
  ],
  upstream_timeout: [
    { when: 'a read', error: settledError(upstreamFailure('upstream_timeout', 504)) },
    {
      when: 'a write that may have happened',
      error: settledError(
        withWriteUncertainty(upstreamFailure('upstream_timeout', 504), 'write', true),
      ),
    },
  ],
  upstream_unavailable: [
    { when: "the app's 503", error: settledError(upstreamFailure('upstream_unavailable', 503)) },
  ],
  invalid_api_key: [{ when: 'no valid key', error: new InvalidApiKeyError() }],
  insufficient_access: [
    {
      when: 'read-only key',
      error: new InsufficientAccessError('A read-only key can only read.', {
        required_access: 'standard',
      }),
    },
  ],
  // Every /v1 route refuses a query that is not percent-encoded UTF-8.
  invalid_request: [
    {
      when: 'a malformed query',
      error: new InvalidRequestError('Invalid request query (status: not percent-encoded UTF-8).', [
        { path: 'status', message: 'must be percent-encoded UTF-8' },
      ]),
    },
  ],
  not_found: [{ when: 'unknown id', error: new ApiError('not_found', 'Not found.') }],
  method_not_allowed: [
    {
      when: 'wrong method',
      error: new ApiError('method_not_allowed', 'This path does not take this method.'),
    },
  ],
  conflict: [
    {
      when: 'the state does not allow it',
      error: new ConflictError('The request conflicts with the current state.'),
    },
  ],
  auth_config_required: [
    {
      when: 'no OAuth client',
      error: new ApiError(
        'auth_config_required',
        'No OAuth client for "acme" in environment "production": register one at the app with the redirect URI that GET /v1/apps/acme shows, add it with POST /v1/auth-configs, or enable funded access.',
        { app: 'acme' },
      ),
    },
  ],
  idempotency_key_reused: [
    {
      when: 'key reused',
      error: new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was used for a different request; use a new key.',
      ),
    },
  ],
  gone: [
    { when: 'removed for good', error: new ApiError('gone', 'This resource is gone for good.') },
  ],
  payload_too_large: [
    {
      when: 'request body too large',
      error: new ApiError(
        'payload_too_large',
        'The request body exceeds the limit of 1048576 bytes.',
        {
          limit_bytes: 1_048_576,
        },
      ),
    },
  ],
  headers_too_large: [
    {
      when: 'headers too large',
      error: new ApiError('headers_too_large', 'The request headers are too large.'),
    },
  ],
  unsupported_media_type: [
    {
      when: 'not JSON',
      error: notJsonMediaType('text/plain'),
    },
    {
      when: 'not UTF-8',
      error: new ApiError(
        'unsupported_media_type',
        'JSON request bodies must be UTF-8 (RFC 8259): send charset=utf-8, or no charset.',
      ),
    },
  ],
  rate_limited: [
    {
      when: 'per-key limit',
      error: new ApiError(
        'rate_limited',
        'This API key has made more than 6000 requests in a minute. Retry in 12 seconds.',
      ),
    },
  ],
  internal_error: [{ when: 'our failure', error: internalError() }],
  service_unavailable: [
    {
      when: 'the database did not answer',
      error: new ServiceUnavailableError('The database did not answer in time; retry shortly.'),
    },
  ],
};

/**
 * What a governed call (an action run, a proxy request) can answer beyond every request: the
 * policy's refusals, the connection's state, and the app's own failures.
 */
export const CALL_ERRORS = [
  'idempotency_key_reused',
  'connection_scope_required',
  'auth_config_required',
  'upstream_invalid_request',
  'insufficient_access',
  'approval_required',
  'denied_by_policy',
  'not_found',
  'connection_required',
  'connection_expired',
  'payload_too_large',
  'upstream_rate_limited',
  'upstream_unavailable',
  'upstream_timeout',
] as const satisfies readonly ErrorCode[];

/** A call's body limit applies to the app's answer too. */
export const CALL_ERROR_EXAMPLES: readonly ErrorExample[] = [
  ...GENERIC.payload_too_large,
  {
    when: "the app's answer too large",
    error: settledError(answerTooLarge(200, 1_048_576)),
  },
];

function refusedDecider(when: string, requestedFrom: string[], decider: string): ErrorExample {
  const parties = { agentId: EXAMPLE_APPROVAL.agent_id, requestedFrom };
  const message = deciderRefusal(parties, decider) ?? 'This decider may not decide.';
  return {
    when,
    error: new InsufficientAccessError(message, { approval: { id: EXAMPLE_APPROVAL.id } }),
  };
}

/** What deciding an approval can answer, whichever of the ways to decide is used. */
export const DECISION_ERROR_EXAMPLES: readonly ErrorExample[] = [
  refusedDecider('the agent decides its own call', [], EXAMPLE_APPROVAL.agent_id),
  refusedDecider('not among requested_from', ['admin'], 'ops-lead'),
  {
    when: 'no longer pending',
    error: new ConflictError(
      `Approval ${EXAMPLE_APPROVAL.id} is approved; only a pending one can be decided.`,
      { approval: { id: EXAMPLE_APPROVAL.id, status: 'approved' } },
    ),
  },
  { when: 'unknown approval', error: new NotFoundError(`Approval ${EXAMPLE_APPROVAL.id}`) },
];

const WEAKEST_CALLERS: Caller[] = (['standard', 'read_only'] as const).map((access) => ({
  keyId: 'example',
  keyName: 'example',
  environmentId: 'example',
  environmentName: 'production',
  access,
  scopes: [],
  agentId: 'demo-agent',
  audience: 'backend',
}));

/**
 * The refusal the access check gives the weakest key it refuses: a standard key without the
 * scope, else a read-only key. None when every key may (a plain read).
 */
export function accessRefusal(requires: Requirement): ApiError | null {
  for (const caller of WEAKEST_CALLERS) {
    try {
      checkAccess(caller, requires);
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
  }
  return null;
}

/** A value each part's validation refuses: nothing where fields are required, else a stray one. */
const PROBES = {
  body: [{}, { unexpected: true }],
  query: [{ unexpected: '1' }],
} as const;

function refusalOf(
  schema: z.ZodType,
  location: Location,
  probes: readonly unknown[],
): ApiError | null {
  for (const probe of probes) {
    try {
      parse(schema, probe, location);
    } catch (error) {
      if (error instanceof InvalidRequestError) return error;
      throw error;
    }
  }
  return null;
}

function bodySchemaOf(request: RouteConfig['request']): z.ZodType | null {
  const media = request?.body?.content['application/json'];
  const schema = media && 'schema' in media ? media.schema : null;
  return schema instanceof z.ZodType ? schema : null;
}

/** What validation answers a request with a missing field or an unknown one. */
export function validationRefusal(request: RouteConfig['request']): ApiError | null {
  const body = bodySchemaOf(request);
  const found = body ? refusalOf(body, 'body', PROBES.body) : null;
  if (found) return found;
  const headers = request?.headers;
  const inHeaders = headers instanceof z.ZodType ? refusalOf(headers, 'header', [{}]) : null;
  if (inHeaders) return inHeaders;
  const query = request?.query;
  // Path parameters are left out: some routes answer 404 for an id that cannot exist, not 400.
  return query instanceof z.ZodType ? refusalOf(query, 'query', PROBES.query) : null;
}

/** The examples of one code for one operation: generated ones, the route's own, else generic. */
export function examplesOf(
  code: ErrorCode,
  context: ExampleContext,
  own: readonly ErrorExample[],
): ErrorExample[] {
  const generated: ErrorExample[] = [];
  if (code === 'insufficient_access' && context.requires) {
    const refusal = accessRefusal(context.requires);
    if (refusal) generated.push({ when: 'key not allowed', error: refusal });
  }
  if (code === 'invalid_request') {
    const refusal = validationRefusal(context.request);
    if (refusal) generated.push({ when: 'invalid input', error: refusal });
  }
  if (code === 'conflict' && context.idempotent) {
    generated.push({
      when: 'same Idempotency-Key in flight',
      error: new ConflictError(
        'A request with this Idempotency-Key is still in progress; retry shortly.',
      ),
    });
  }
  const mine = [...generated, ...own.filter((example) => example.error.code === code)];
  return mine.length > 0 ? mine : GENERIC[code];
}

/** The envelope an example shows, as the service sends it. */
export function envelopeOf(example: ErrorExample): ErrorEnvelope {
  return example.error.toEnvelope();
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}
