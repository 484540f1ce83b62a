import * as classes from './error-classes.js';
import {
  type AnsweredWith,
  type ErrorBody,
  type ErrorCode,
  type GatehouseError,
} from './gatehouse-error.js';
import { isBoolean, isRecord, isString } from './json-guards.js';

/**
 * The class of each code: exhaustive, so a code the served document adds does not compile until
 * it has one (after `npm run client:generate`).
 */
const ERROR_CLASSES: {
  [C in ErrorCode]: new (body: ErrorBody, answer: AnsweredWith) => GatehouseError;
} = {
  denied_by_policy: classes.DeniedByPolicyError,
  approval_required: classes.ApprovalRequiredError,
  connection_required: classes.ConnectionRequiredError,
  connection_expired: classes.ConnectionExpiredError,
  upstream_rate_limited: classes.UpstreamRateLimitedError,
  upstream_invalid_request: classes.UpstreamInvalidRequestError,
  upstream_timeout: classes.UpstreamTimeoutError,
  upstream_unavailable: classes.UpstreamUnavailableError,
  invalid_api_key: classes.InvalidApiKeyError,
  insufficient_access: classes.InsufficientAccessError,
  invalid_request: classes.InvalidRequestError,
  not_found: classes.NotFoundError,
  method_not_allowed: classes.MethodNotAllowedError,
  conflict: classes.ConflictError,
  auth_config_required: classes.AuthConfigRequiredError,
  connection_scope_required: classes.ConnectionScopeRequiredError,
  idempotency_key_reused: classes.IdempotencyKeyReusedError,
  gone: classes.GoneError,
  payload_too_large: classes.PayloadTooLargeError,
  headers_too_large: classes.HeadersTooLargeError,
  unsupported_media_type: classes.UnsupportedMediaTypeError,
  rate_limited: classes.RateLimitedError,
  internal_error: classes.InternalError,
  service_unavailable: classes.ServiceUnavailableError,
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
