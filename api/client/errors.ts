import type { components } from './generated/connected-users.js';

/** Every code Gatehouse answers with (SPEC.md §7 and the general ones), from the served document. */
export type ErrorCode = components['schemas']['Error']['error']['code'];

/** The envelope's `error` object, as served: `code`, `message`, `retryable`, and fields of its code. */
export type ErrorBody = components['schemas']['Error']['error'];

export type ApprovalStatus = components['schemas']['Approval']['status'];

/** The approval that holds a call, as `approval_required` names it. */
export interface HeldApproval {
  id: string;
  status: ApprovalStatus;
  /** Who may decide; empty means anyone allowed to decide but the calling agent. */
  requested_from: string[];
  expires_at: string;
}

/** Where an answer came from: the status, the headers and `X-Trace-Id` to quote to support. */
export interface AnsweredWith {
  status: number;
  headers: Headers;
}

/**
 * An error Gatehouse answered with: its `code`, its `message` (for people), whether sending the
 * same request again can succeed (`retryable`), the HTTP status, the trace id, and every field
 * of the envelope (`fields`). Subclasses per code name the fields their code carries.
 */
export class GatehouseError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly status: number;
  /** `X-Trace-Id`: quote it when asking about this answer. */
  readonly traceId: string | null;
  readonly headers: Headers;
  /** The envelope's `error` object as sent, fields of its code included. */
  readonly fields: Readonly<ErrorBody>;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body.message);
    this.name = new.target.name;
    this.code = body.code;
    this.retryable = body.retryable;
    this.status = answer.status;
    this.headers = answer.headers;
    this.traceId = answer.headers.get('x-trace-id');
    this.fields = body;
  }

  /** `Retry-After` in seconds, when the answer gave one. */
  get retryAfterSeconds(): number | null {
    const value = Number(this.headers.get('retry-after') ?? Number.NaN);
    return Number.isFinite(value) && value >= 0 ? value : null;
  }
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number';
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A field of the envelope when it has the type its code gives it, else null. */
function field<T>(body: ErrorBody, name: string, is: (value: unknown) => value is T): T | null {
  const value = body[name];
  return is(value) ? value : null;
}

const APPROVAL_STATUSES: readonly string[] = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'cancelled',
] satisfies ApprovalStatus[];

const isApprovalStatus = (value: unknown): value is ApprovalStatus =>
  isString(value) && APPROVAL_STATUSES.includes(value);

function isNamedApproval(
  value: unknown,
): value is { id: string; status: ApprovalStatus } & Record<string, unknown> {
  return isRecord(value) && isString(value.id) && isApprovalStatus(value.status);
}

/** 403: the policy holds the call for a person; send the same call again once it is decided. */
export class ApprovalRequiredError extends GatehouseError {
  readonly approval: HeldApproval;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    const approval = body.approval;
    // The server always names the approval: without it, the answer is not Gatehouse's.
    if (!isNamedApproval(approval)) {
      throw new TypeError('approval_required came without its approval');
    }
    this.approval = {
      id: approval.id,
      status: approval.status,
      requested_from: Array.isArray(approval.requested_from)
        ? approval.requested_from.filter(isString)
        : [],
      expires_at: isString(approval.expires_at) ? approval.expires_at : '',
    };
  }
}

/** 403: a policy denies the call, or a person rejected it (`approval` then names it). */
export class DeniedByPolicyError extends GatehouseError {
  /** The rejected approval, when a person rejected the call. */
  readonly approval: { id: string; status: ApprovalStatus } | null;
  /** The policy that denied the call, when a rule did. */
  readonly policy: string | null;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    const approval = field(body, 'approval', isNamedApproval);
    this.approval = approval && { id: approval.id, status: approval.status };
    this.policy = field(body, 'policy', isString);
  }
}

/** 409: the user has no connection to the app; send them a connect link. */
export class ConnectionRequiredError extends GatehouseError {}

/** 409: the app no longer accepts the user's refresh token; send the user to `reconnect_url`. */
export class ConnectionExpiredError extends GatehouseError {
  /** Single use, 7 days. */
  readonly reconnect_url: string | null;
  readonly connection_id: string | null;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.reconnect_url = field(body, 'reconnect_url', isString);
    this.connection_id = field(body, 'connection_id', isString);
  }
}

/** 409: a remote MCP server needs a scope the user has not granted; `reconnect_url` asks for it. */
export class ConnectionScopeRequiredError extends ConnectionExpiredError {
  readonly scope: string | null;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.scope = field(body, 'scope', isString);
  }
}

/** The `upstream_*` codes: the app's own failure, with its status. */
export class UpstreamError extends GatehouseError {
  readonly upstream_status: number | null;
  /**
   * For a write that timed out or whose answer was lost: whether the app may have carried it out
   * (then read the app's state before sending it again, with a new key).
   */
  readonly write_may_have_happened: boolean | null;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.upstream_status = field(body, 'upstream_status', isNumber);
    this.write_may_have_happened = field(body, 'write_may_have_happened', isBoolean);
  }
}

export class UpstreamRateLimitedError extends UpstreamError {}
export class UpstreamInvalidRequestError extends UpstreamError {
  /** The app's own answer to the request it refused. */
  readonly upstream_body: unknown;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.upstream_body = body.upstream_body;
  }
}
export class UpstreamTimeoutError extends UpstreamError {}
export class UpstreamUnavailableError extends UpstreamError {}

export class InvalidApiKeyError extends GatehouseError {}

/** 403: the key's level or scopes do not cover it, or the four-eyes rule refuses a decider. */
export class InsufficientAccessError extends GatehouseError {
  readonly required_scope: string | null;
  readonly required_access: string | null;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.required_scope = field(body, 'required_scope', isString);
    this.required_access = field(body, 'required_access', isString);
  }
}

/** 400: `issues` names each field at fault. */
export class InvalidRequestError extends GatehouseError {
  readonly issues: NonNullable<ErrorBody['issues']>;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.issues = body.issues ?? [];
  }
}

export class NotFoundError extends GatehouseError {}
export class MethodNotAllowedError extends GatehouseError {}
export class ConflictError extends GatehouseError {}
export class AuthConfigRequiredError extends GatehouseError {}
export class IdempotencyKeyReusedError extends GatehouseError {}
export class GoneError extends GatehouseError {}
export class PayloadTooLargeError extends GatehouseError {}
export class HeadersTooLargeError extends GatehouseError {}
export class UnsupportedMediaTypeError extends GatehouseError {}
export class RateLimitedError extends GatehouseError {}
export class InternalError extends GatehouseError {}

/** 503: Postgres or Temporal did not answer in time; the state fields say whether anything happened. */
export class ServiceUnavailableError extends GatehouseError {
  readonly call_state: string | null;
  readonly decision_state: string | null;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body, answer);
    this.call_state = field(body, 'call_state', isString);
    this.decision_state = field(body, 'decision_state', isString);
  }
}

/**
 * The class of each code: exhaustive, so a code the served document adds does not compile until
 * it has one (after `npm run client:generate`).
 */
const ERROR_CLASSES: {
  [C in ErrorCode]: new (body: ErrorBody, answer: AnsweredWith) => GatehouseError;
} = {
  denied_by_policy: DeniedByPolicyError,
  approval_required: ApprovalRequiredError,
  connection_required: ConnectionRequiredError,
  connection_expired: ConnectionExpiredError,
  upstream_rate_limited: UpstreamRateLimitedError,
  upstream_invalid_request: UpstreamInvalidRequestError,
  upstream_timeout: UpstreamTimeoutError,
  upstream_unavailable: UpstreamUnavailableError,
  invalid_api_key: InvalidApiKeyError,
  insufficient_access: InsufficientAccessError,
  invalid_request: InvalidRequestError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  conflict: ConflictError,
  auth_config_required: AuthConfigRequiredError,
  connection_scope_required: ConnectionScopeRequiredError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  gone: GoneError,
  payload_too_large: PayloadTooLargeError,
  headers_too_large: HeadersTooLargeError,
  unsupported_media_type: UnsupportedMediaTypeError,
  rate_limited: RateLimitedError,
  internal_error: InternalError,
  service_unavailable: ServiceUnavailableError,
};

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CLASSES, value);
}

/** The envelope's `error` when `body` is Gatehouse's error envelope, else null. */
export function errorBodyOf(body: unknown): ErrorBody | null {
  if (!isRecord(body) || !isRecord(body.error)) return null;
  const error = body.error;
  if (!isErrorCode(error.code) || !isString(error.message) || !isBoolean(error.retryable)) {
    return null;
  }
  return { ...error, code: error.code, message: error.message, retryable: error.retryable };
}

/** The one mapping from an answered envelope to its class. */
export function errorFrom(body: ErrorBody, answer: AnsweredWith): GatehouseError {
  return new ERROR_CLASSES[body.code](body, answer);
}

/**
 * A failure answer that is not Gatehouse's envelope (a proxy or load balancer in front of it
 * answered): the status and the first bytes of the body, so it is not mistaken for a code.
 */
export class UnexpectedResponseError extends Error {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  readonly retryable: boolean;

  constructor(answer: AnsweredWith, body: string) {
    super(
      `Unexpected answer ${String(answer.status)} (not a Gatehouse error): ${body.slice(0, 200)}`,
    );
    this.name = 'UnexpectedResponseError';
    this.status = answer.status;
    this.headers = answer.headers;
    this.body = body;
    this.retryable = answer.status === 429 || answer.status >= 500;
  }
}
