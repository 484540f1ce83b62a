/**
 * Every error code Gatehouse answers with, its HTTP status and whether retrying can help.
 * The public contract's codes first (a call's outcome, the key), then the general ones any
 * endpoint may answer. Workflows and the API share this table: a code added here without a
 * status does not compile.
 */
export const ERROR_CODES = {
  denied_by_policy: { status: 403, retryable: false },
  approval_required: { status: 403, retryable: true },
  connection_required: { status: 409, retryable: false },
  connection_expired: { status: 409, retryable: false },
  upstream_rate_limited: { status: 429, retryable: true },
  upstream_invalid_request: { status: 400, retryable: false },
  upstream_timeout: { status: 504, retryable: true },
  upstream_unavailable: { status: 503, retryable: true },
  invalid_api_key: { status: 401, retryable: false },
  insufficient_access: { status: 403, retryable: false },

  invalid_request: { status: 400, retryable: false },
  not_found: { status: 404, retryable: false },
  method_not_allowed: { status: 405, retryable: false },
  conflict: { status: 409, retryable: false },
  auth_config_required: { status: 409, retryable: false },
  connection_scope_required: { status: 409, retryable: false },
  idempotency_key_reused: { status: 409, retryable: false },
  gone: { status: 410, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  headers_too_large: { status: 431, retryable: false },
  unsupported_media_type: { status: 415, retryable: false },
  rate_limited: { status: 429, retryable: true },
  internal_error: { status: 500, retryable: true },
  service_unavailable: { status: 503, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The body of every failed response: `{ error: { code, message, retryable, ...extra } }`. */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; retryable: boolean } & Record<string, unknown>;
}
