/**
 * The upstream step of a proxy call to an OpenAPI app (`/v1/proxy/{app}/{path}`): the caller's
 * method, canonical path, query, forwarded headers and body, sent to the app's pinned base URL
 * as the catalog proxy sends them to a catalog app, and the app's answer given back as it is
 * (raw body), as the catalog proxy gives it. The connection is the one OpenAPI operations use
 * (operation-call.ts): the address connected to is checked unless MCP_APPS_ALLOW_PRIVATE, no
 * redirect is followed, the wait is UPSTREAM_TIMEOUT_MS, the answer is cut at BODY_LIMIT_BYTES.
 *
 * The user's credential goes on as for an operation (`credential`, the same hook): the proxy
 * knows no operation's security, so it is sent whenever the preparation settled a connection,
 * which it does as the catalog proxy does, for every request to an app its users connect to.
 *
 * A write is sent in one attempt only, as an operation's is: a later attempt (the workflow gives
 * writes to apps outside the catalog several, for remote MCP tasks) sends nothing and answers as
 * a write that may have happened.
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import { NonPublicAddressError } from '../webhooks/endpoint-address.js';
import { mcpServerFetch, ResponseTooLargeError } from '../mcp-apps/server-fetch.js';
import type { OperationCallDeps } from './operation-call.js';
import { findOpenApiProxyConnection } from './proxy-operations.js';

/** A proxy call as the workflow holds it (workflows/call-types.ts `ProxyCall`), with its place. */
export interface OpenApiProxyCall {
  environmentId: string;
  app: string;
  scope: CallScope;
  method: string;
  /** The canonical path below `/v1/proxy/{app}/` (api/calls/proxy-path.ts), policy's reading. */
  path: string;
  /** The raw query without `?`, or empty. */
  query: string;
  headers: Record<string, string>;
  bodyBase64: string | null;
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

/** The name of one `name=value` pair of a query, form-decoded as URLSearchParams reads it. */
function pairName(pair: string): string {
  const [name] = new URLSearchParams(pair).keys();
  return name ?? '';
}

/**
 * The caller's query with what the credential set: unchanged, byte for byte, where it set
 * nothing (the query policy judged is the query sent); else the caller's pairs of every other
 * name as written, then the credential's, which replace any of the same name (the caller cannot
 * override, nor double, the credential).
 */
function queryWith(raw: string, credentialSet: URLSearchParams, before: URLSearchParams): string {
  const names = new Set(
    [...credentialSet.keys()].filter(
      (name) => JSON.stringify(credentialSet.getAll(name)) !== JSON.stringify(before.getAll(name)),
    ),
  );
  if (names.size === 0) return raw;
  const kept = raw.split('&').filter((pair) => pair !== '' && !names.has(pairName(pair)));
  const added = new URLSearchParams();
  for (const name of names)
    for (const value of credentialSet.getAll(name)) added.append(name, value);
  return [...kept, added.toString()].join('&');
}

/**
 * Null when the environment has no OpenAPI app `call.app` (the caller then refuses the call as
 * to an unknown app).
 */
export async function proxyOutcome(
  deps: OperationCallDeps,
  call: OpenApiProxyCall,
  context: Context | null,
): Promise<UpstreamOutcome | null> {
  const found = await findOpenApiProxyConnection(deps.sql, call.environmentId, call.app);
  if (!found) return null;
  const write = call.scope !== 'read';
  if (write && context && !context.info.isLocal && context.info.attempt > 1) {
    throw failure(
      UPSTREAM_TIMEOUT,
      'the attempt that sent this write was lost; it is never sent again',
      true,
      false,
    );
  }
  const { connection } = found;
  const credential =
    deps.credential && (connection.kind === 'credential' || connection.kind === 'oauth2')
      ? await deps.credential(connection.kind)
      : undefined;
  const base = `${found.baseUrl}/${call.path}`;
  const body =
    call.bodyBase64 === null ? undefined : new Uint8Array(Buffer.from(call.bodyBase64, 'base64'));

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
    const headers = new Headers(call.headers);
    const before = new URLSearchParams(call.query);
    const query = new URLSearchParams(call.query);
    const applied = await credential?.apply(headers, query, force);
    if (applied && !applied.ok) return { kind: 'connection', status: applied.status };
    const search = queryWith(call.query, query, before);
    try {
      return await fetcher(search === '' ? base : `${base}?${search}`, {
        method: call.method,
        headers: Object.fromEntries(headers),
        ...(body === undefined ? {} : { body }),
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
    const response = sent;
    await credential?.answered(response.status);
    const { status } = response;
    const headers = Object.fromEntries(response.headers);
    let bytes: Buffer;
    try {
      bytes = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (error instanceof ResponseTooLargeError || cause instanceof ResponseTooLargeError) {
        return { kind: 'too_large', status, limitBytes: deps.limitBytes };
      }
      if (signal.aborted) throw timedOut();
      throw failure(UPSTREAM_UNREACHABLE, "the app's answer was cut off", true, !write);
    }
    return {
      kind: 'response',
      status,
      headers,
      body: { kind: 'raw', base64: bytes.toString('base64') },
    };
  } finally {
    clearInterval(beat);
  }
}
