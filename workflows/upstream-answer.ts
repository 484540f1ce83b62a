/**
 * How the app's answer becomes the caller's. Pure, so the workflow can run it and
 * tests can read it as a table.
 */
import type { AuditDecision, CallAnswer, UpstreamBody } from './call-types.js';
import type { CallScope } from './catalog/index.js';
import type { ErrorCode } from './error-codes.js';

export interface Settled {
  answer: CallAnswer;
  decision: AuditDecision;
  reason: string;
  /** What audit keeps of the answer; null when the call never reached the app. */
  response: Record<string, unknown> | null;
}

/** Statuses the service turns into its own envelope; every other status is the app's answer. */
function upstreamError(status: number): ErrorCode | null {
  switch (status) {
    case 429:
      return 'upstream_rate_limited';
    case 400:
      return 'upstream_invalid_request';
    case 502:
    case 503:
      return 'upstream_unavailable';
    case 504:
      return 'upstream_timeout';
    default:
      return null;
  }
}

const MESSAGES: Record<string, string> = {
  upstream_rate_limited: 'The app rate-limited the call; retry after a pause.',
  upstream_invalid_request: 'The app rejected the request as malformed.',
  upstream_unavailable: "The app's API is unavailable; retry later.",
  upstream_timeout: 'The app did not answer in time.',
};

/** An upstream_* envelope, for statuses the app returned and for answers that never came. */
export function upstreamFailure(
  code: ErrorCode,
  upstreamStatus: number,
  extra: Record<string, unknown> = {},
): Settled {
  return {
    answer: {
      kind: 'error',
      code,
      message: MESSAGES[code] ?? 'The app failed the call.',
      extra: { upstream_status: upstreamStatus, ...extra },
    },
    decision: 'failed',
    reason: code,
    response: { upstream_status: upstreamStatus, error: code },
  };
}

const UNCERTAIN_WRITE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  upstream_timeout:
    'The app did not answer in time, and this call writes: the app may have carried it out. Check the app before sending it again (see write_may_have_happened).',
  upstream_unavailable:
    "The app's answer was lost after the request reached it, and this call writes: the app may have carried it out. Check the app before sending it again (see write_may_have_happened).",
};

/**
 * A write that failed `upstream_timeout` or `upstream_unavailable` says whether the app may have
 * carried it out: `write_may_have_happened` is true when the request left and no usable
 * answer came back (a timeout, a cut-off answer, a worker lost mid-request, the app's own 502 or
 * 504), false when it provably never reached the app. Reads are always safe to retry: no field.
 * The code and `retryable` stay as error-codes.ts fixes them; the message says what to do.
 */
export function withWriteUncertainty(
  settled: Settled,
  scope: CallScope,
  mayHaveHappened: boolean,
): Settled {
  const { answer } = settled;
  if (scope === 'read' || answer.kind !== 'error') return settled;
  if (answer.code !== 'upstream_timeout' && answer.code !== 'upstream_unavailable') return settled;
  return {
    ...settled,
    answer: {
      ...answer,
      message: (mayHaveHappened && UNCERTAIN_WRITE_MESSAGES[answer.code]) || answer.message,
      extra: { ...answer.extra, write_may_have_happened: mayHaveHappened },
    },
    response: { ...settled.response, write_may_have_happened: mayHaveHappened },
  };
}

/**
 * Headers the caller never gets from the app: hop-by-hop ones (RFC 9110 §7.6.1, plus
 * the legacy `Proxy-Connection`), those fetch has already undone (encoding, length), the app's
 * cookies (for its own domain, never for callers of Gatehouse), and the app's origin policies,
 * which would otherwise speak for Gatehouse's origin: HSTS, CSP and CORS.
 */
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-encoding',
  'content-length',
  'set-cookie',
  'strict-transport-security',
  'content-security-policy',
  'content-security-policy-report-only',
  'cross-origin-opener-policy',
  'cross-origin-embedder-policy',
  'cross-origin-resource-policy',
  'timing-allow-origin',
]);

/** The names a `Connection` header lists are hop-by-hop for that message (RFC 9110 §7.6.1). */
export function connectionListed(value: string | undefined): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ''),
  );
}

export function passedHeaders(headers: Record<string, string>): Record<string, string> {
  const lower = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const listed = connectionListed(lower.connection);
  for (const name of connectionListed(lower['proxy-connection'])) listed.add(name);
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => {
      const key = name.toLowerCase();
      return (
        !DROPPED_RESPONSE_HEADERS.has(key) && !listed.has(key) && !key.startsWith('access-control-')
      );
    }),
  );
}

function retryAfter(headers: Record<string, string>): Record<string, unknown> {
  const value = headers['retry-after'];
  return value === undefined ? {} : { retry_after: value };
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: UpstreamBody;
  reportsFailure?: boolean;
}

/** A proxy call: the app's own response, except the four statuses the service names. */
export function settleProxy(response: AppResponse): Settled {
  const code = upstreamError(response.status);
  if (code) return upstreamFailure(code, response.status, retryAfter(response.headers));
  const bodyBase64 = response.body.kind === 'raw' ? response.body.base64 : '';
  return {
    answer: {
      kind: 'passthrough',
      status: response.status,
      headers: passedHeaders(response.headers),
      bodyBase64,
    },
    decision: 'allowed',
    reason: `app answered ${String(response.status)}`,
    response: {
      status: response.status,
      content_type: response.headers['content-type'] ?? null,
      // base64 length → byte count, without decoding.
      bytes: Math.floor((bodyBase64.length * 3) / 4) - (bodyBase64.match(/=+$/)?.[0].length ?? 0),
    },
  };
}

/**
 * An action: 2xx → `{ok: true, data}` (already shaped by the action, in the activity); any other
 * app-level failure is the app's answer as data, `{ok: false, data, upstream_status}`, not an
 * envelope, which is only for calls the service stops or holds itself.
 */
export function settleAction(response: AppResponse): Settled {
  const code = upstreamError(response.status);
  if (code) {
    const extra = retryAfter(response.headers);
    const settled = upstreamFailure(code, response.status, extra);
    if (code === 'upstream_invalid_request' && response.body.kind === 'parsed') {
      // The app's explanation is what the caller needs to fix the request.
      return {
        ...settled,
        answer: {
          ...settled.answer,
          extra: { upstream_status: 400, upstream_body: response.body.value },
        },
      } as Settled;
    }
    return settled;
  }
  const value = response.body.kind === 'parsed' ? response.body.value : null;
  if (response.status >= 200 && response.status < 300 && !response.reportsFailure) {
    const data = value;
    return {
      answer: { kind: 'json', status: 200, body: { ok: true, data } },
      decision: 'allowed',
      reason: `app answered ${String(response.status)}`,
      response: { ok: true, upstream_status: response.status, data },
    };
  }
  return {
    answer: {
      kind: 'json',
      status: 200,
      body: { ok: false, data: value, upstream_status: response.status },
    },
    decision: 'allowed',
    reason: `app answered ${String(response.status)}`,
    response: { ok: false, upstream_status: response.status, data: value },
  };
}
