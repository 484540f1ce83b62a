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
