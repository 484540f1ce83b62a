import { errorBodyOf, errorFrom } from './errors.js';
import { UnexpectedResponseError, type GatehouseError } from './gatehouse-error.js';

export interface TransportOptions {
  apiKey: string;
  /** How many times a failed attempt is sent again (network failures, retryable codes). */
  maxRetries: number;
  fetch: (request: Request) => Promise<Response>;
}

/**
 * How one request is answered: a Response when it succeeded (or, with `passThrough`, when the
 * answer is the app's own and not Gatehouse's envelope), else the typed error thrown.
 */
export type Transport = (
  request: Request,
  options?: { passThrough?: boolean },
) => Promise<Response>;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const FIRST_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 5_000;
/** A `Retry-After` longer than this is the caller's to wait out, not a retry's. */
const MAX_RETRY_AFTER_MS = 10_000;

/** Half to all of the doubling backoff, so many clients retrying together spread out. */
export function backoffMs(attempt: number): number {
  const ceiling = Math.min(FIRST_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * Whether sending the same request again can help: the code says it is retryable, except a held
 * call (it waits for a person, not for time: see waitForApproval) and a write that may have
 * happened (its answer is final for its key).
 */
function worthRetrying(error: GatehouseError | UnexpectedResponseError): boolean {
  if (error instanceof UnexpectedResponseError) return error.retryable;
  if (error.code === 'approval_required') return false;
  return error.retryable && error.fields.write_may_have_happened !== true;
}

async function failureOf(response: Response): Promise<GatehouseError | UnexpectedResponseError> {
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: not Gatehouse's envelope.
  }
  const body = errorBodyOf(parsed);
  const answer = { status: response.status, headers: response.headers };
  return body ? errorFrom(body, answer) : new UnexpectedResponseError(answer, text);
}

/**
 * The one way requests leave the client: authenticated, a write given an `Idempotency-Key` when
 * the caller set none, and sent again, with the same key, after a network failure or a
 * retryable answer (after `Retry-After` when the answer says, else a backoff). The key is what
 * makes a retry safe: a write that reached Gatehouse is never made twice.
 */
export function createTransport(options: TransportOptions): Transport {
  return async (request, { passThrough = false } = {}) => {
    const headers = new Headers(request.headers);
    headers.set('authorization', `Bearer ${options.apiKey}`);
    if (WRITES.has(request.method) && !headers.has('idempotency-key')) {
      headers.set('idempotency-key', crypto.randomUUID());
    }
    const template = new Request(request, { headers });
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await options.fetch(template.clone());
      } catch (error) {
        // A network failure; an abort is the caller's and ends the call.
        if (request.signal.aborted || attempt >= options.maxRetries) throw error;
        await sleep(backoffMs(attempt), request.signal);
        continue;
      }
      if (response.ok) return response;
      if (passThrough && !isJson(response)) return response;
      const failure = await failureOf(response);
      if (passThrough && failure instanceof UnexpectedResponseError) {
        return new Response(failure.body, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      }
      if (!worthRetrying(failure) || attempt >= options.maxRetries) throw failure;
      const after = failure instanceof UnexpectedResponseError ? null : failure.retryAfterSeconds;
      if (after !== null && after * 1000 > MAX_RETRY_AFTER_MS) throw failure;
      await sleep(after === null ? backoffMs(attempt) : after * 1000, request.signal);
    }
  };
}

function isJson(response: Response): boolean {
  return /^application\/(.+\+)?json\b/i.test(response.headers.get('content-type') ?? '');
}
