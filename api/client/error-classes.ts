import {
  GatehouseError,
  type AnsweredWith,
  type ApprovalStatus,
  type ErrorBody,
  type HeldApproval,
} from './gatehouse-error.js';
import { isBoolean, isNumber, isRecord, isString } from './json-guards.js';

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
