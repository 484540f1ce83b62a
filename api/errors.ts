import {
  ServiceError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  isGrpcServiceError,
} from '@temporalio/client';
import { isDatabaseUnavailable } from '../infra/database/client.js';
import { ERROR_CODES, type ErrorCode, type ErrorEnvelope } from '../workflows/error-codes.js';

/**
 * The one error hierarchy of the API. Anything thrown while handling a request ends up in
 * `toEnvelope`; errors that are not ApiErrors become a 500 `internal_error` with no details.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
  }

  toEnvelope(): ErrorEnvelope {
    return {
      error: { code: this.code, message: this.message, retryable: this.retryable, ...this.extra },
    };
  }
}

export interface Issue {
  path: string;
  message: string;
}

export class InvalidRequestError extends ApiError {
  constructor(message: string, issues: Issue[] = []) {
    super('invalid_request', message, { issues });
  }
}

export class NotFoundError extends ApiError {
  constructor(what: string) {
    super('not_found', `${what} not found`);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, extra: Record<string, unknown> = {}) {
    super('conflict', message, extra);
  }
}

export class InvalidApiKeyError extends ApiError {
  constructor(message = 'The API key is missing, wrong, revoked or for another environment.') {
    super('invalid_api_key', message, {}, { 'WWW-Authenticate': 'Bearer realm="gatehouse"' });
  }
}

/** 405: the path exists, not for this method; `Allow` lists those it takes (RFC 9110 §15.5.6). */
export class MethodNotAllowedError extends ApiError {
  constructor(message: string, allowed: readonly string[]) {
    super('method_not_allowed', message, {}, { Allow: allowed.join(', ') });
  }
}

/** 415: a request body in a media type (or charset) the operation does not read. */
export class UnsupportedMediaTypeError extends ApiError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}

export class InsufficientAccessError extends ApiError {
  constructor(message: string, extra: Record<string, unknown> = {}) {
    super('insufficient_access', message, extra);
  }
}

export function internalError(): ApiError {
  return new ApiError(
    'internal_error',
    'Something went wrong on our side. Retry later; if it persists, contact support with the trace id.',
  );
}

/**
 * 503 `service_unavailable`: Postgres or Temporal did not answer within its bound. The
 * message says what became of the request, so a caller knows whether retrying is safe.
 */
export class ServiceUnavailableError extends ApiError {
  constructor(message: string, extra: Record<string, unknown> = {}, retryAfterSeconds = 2) {
    super('service_unavailable', message, extra, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/**
 * gRPC statuses of a Temporal that is down, frozen or overloaded, or of a request deadline
 * (Connection.withDeadline) that ran out: CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED,
 * UNAVAILABLE.
 */
const TEMPORAL_UNAVAILABLE_GRPC: ReadonlySet<number> = new Set([1, 4, 8, 14]);

/** Whether a Temporal client call failed because the server did not answer in time. */
export function isTemporalUnavailable(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const cause = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(cause) && TEMPORAL_UNAVAILABLE_GRPC.has(cause.code);
}

/**
 * The one mapping of "a dependency did not answer" to 503, for whatever a route awaited: a
 * query, or a Temporal call outside the paths that say more (api/temporal/call-workflows.ts).
 */
export function serviceUnavailableFrom(error: unknown): ServiceUnavailableError | null {
  if (isDatabaseUnavailable(error)) {
    return new ServiceUnavailableError('The database did not answer in time; retry shortly.');
  }
  if (isTemporalUnavailable(error)) {
    return new ServiceUnavailableError('Temporal did not answer in time; retry shortly.');
  }
  return null;
}
