/**
 * One exchange with an OpenAPI app's API, shared by its operations (operation-call.ts) and its
 * proxy (proxy-call.ts): the request sent through the guarded connection remote MCP servers use
 * (the address connected to is checked unless MCP_APPS_ALLOW_PRIVATE; no redirect followed),
 * within UPSTREAM_TIMEOUT_MS, its answer read up to BODY_LIMIT_BYTES. The user's credential is set
 * on the request just before it is sent; an OAuth token the app refuses (401) is refreshed and the
 * request sent once more (a 401 means the app did not act), as for catalog apps.
 *
 * A write is sent by one attempt only: the workflow gives writes to apps outside the catalog
 * several attempts (for remote MCP tasks), and an OpenAPI request keeps nothing to resume, so a
 * later attempt sends nothing and answers as a write that may have happened, which is what a lost
 * worker's write is.
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import { NonPublicAddressError } from '../webhooks/endpoint-address.js';
import { mcpServerFetch, ResponseTooLargeError } from '../mcp-apps/server-fetch.js';
import type { RequestCredential } from './operation-credential.js';

export interface ExchangeDeps {
  timeoutMs: number;
  limitBytes: number;
  allowPrivate: boolean;
}

/** What to send, before the credential is set on it. */
export interface AppRequest {
  method: string;
  headers: Headers;
  query: URLSearchParams;
  body?: string | Uint8Array;
  /** The URL to send to, given the query once the credential is set on it. */
  target: (query: URLSearchParams) => string;
}

/** The app's answer, read whole within the limit. */
export interface AppAnswer {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
}

/** Errors that prove the request never left this machine. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function failure(type: string, message: string, sent: boolean, retryable: boolean) {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !retryable,
    details: [{ sent } satisfies UpstreamFailureDetails],
  });
}

/**
 * Refuses a write's later attempt before anything is read or sent (see above). `context`: the
 * activity's, or null when called outside one (tests).
 */
export function refuseResentWrite(write: boolean, context: Context | null): void {
  if (write && context && !context.info.isLocal && context.info.attempt > 1) {
    throw failure(
      UPSTREAM_TIMEOUT,
      'the attempt that sent this write was lost; it is never sent again',
      true,
      false,
    );
  }
}

/**
 * Sends the request and reads the answer: an `AppAnswer`, or the outcome that ends the call
 * without one (the connection unusable, the answer too large). Fails with `upstream_timeout` or
 * `upstream_unreachable` (retryable for reads only) saying whether the request may have left.
 */
export async function exchangeWithApp(
  deps: ExchangeDeps,
  request: AppRequest,
  credential: RequestCredential | undefined,
  options: { write: boolean; context: Context | null },
): Promise<AppAnswer | UpstreamOutcome> {
  const { write, context } = options;
  const beat =
    context && !context.info.isLocal
      ? setInterval(() => {
          context.heartbeat();
        }, 1_000)
      : undefined;
  const signal = AbortSignal.any([
    AbortSignal.timeout(deps.timeoutMs),
    ...(context ? [context.cancellationSignal] : []),
  ]);
  const fetcher = mcpServerFetch({
    allowPrivate: deps.allowPrivate,
    maxResponseBytes: deps.limitBytes,
  });
  const timedOut = () =>
    failure(
      UPSTREAM_TIMEOUT,
      `the app did not answer within ${String(deps.timeoutMs)} ms`,
      true,
      false,
    );
  /** One request with the credential as it is now (`force`: refreshed first). */
  const send = async (force: boolean): Promise<Response | UpstreamOutcome> => {
    const headers = new Headers(request.headers);
    const query = new URLSearchParams(request.query);
    const applied = await credential?.apply(headers, query, force);
    if (applied && !applied.ok) return { kind: 'connection', status: applied.status };
    try {
      return await fetcher(request.target(query), {
        method: request.method,
        headers: Object.fromEntries(headers),
        ...(request.body === undefined ? {} : { body: request.body }),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw timedOut();
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
      const code = typeof cause?.code === 'string' ? cause.code : undefined;
      const sent = !NOT_SENT.has(code ?? '') && !(cause instanceof NonPublicAddressError);
      throw failure(
        UPSTREAM_UNREACHABLE,
        `the app could not be reached (${code ?? (typeof cause?.message === 'string' ? cause.message : 'network error')})`,
        sent,
        !write,
      );
    }
  };
  try {
    let sent = await send(false);
    if (sent instanceof Response && sent.status === 401 && credential?.refreshable) {
      // The app refused the token and so did not act: one more request, with a fresh one.
      await sent.body?.cancel().catch(() => undefined);
      sent = await send(true);
    }
    if (!(sent instanceof Response)) return sent;
    await credential?.answered(sent.status);
    const { status } = sent;
    const headers = Object.fromEntries(sent.headers);
    try {
      return { status, headers, bytes: Buffer.from(await sent.arrayBuffer()) };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (error instanceof ResponseTooLargeError || cause instanceof ResponseTooLargeError) {
        return { kind: 'too_large', status, limitBytes: deps.limitBytes };
      }
      if (signal.aborted) throw timedOut();
      throw failure(UPSTREAM_UNREACHABLE, "the app's answer was cut off", true, !write);
    }
  } finally {
    clearInterval(beat);
  }
}
