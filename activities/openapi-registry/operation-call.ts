/**
 * The upstream step of a call to an operation of an OpenAPI app: the request is built only by
 * the importer's buildRequest from the accepted snapshot's descriptor (method and path template
 * from the document, each value in its own place, nothing undeclared), sent to the app's pinned
 * base URL through the same guarded connection as a remote MCP server's (the address connected
 * to is checked, unless MCP_APPS_ALLOW_PRIVATE; no redirect followed), within
 * UPSTREAM_TIMEOUT_MS, and its answer read up to BODY_LIMIT_BYTES, as every call's is.
 *
 * Credentials: `credential` is the user's connection (operation-credential.ts), set on the
 * request just before it is sent, as callUpstreamActivity adds a catalog app's OAuth token. An
 * OAuth token the app refuses (401) is refreshed and the request sent once more, as for catalog
 * apps (a 401 means the app did not act); an entered credential refused is marked expired.
 *
 * A write is sent in one attempt only. The call workflow runs a write to an app outside the
 * catalog with several attempts (for remote MCP tasks, resumed after a lost worker); an OpenAPI
 * request keeps nothing to resume, so a later attempt sends nothing and answers as a write that
 * may have happened, which is what a lost worker's write is.
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import type { Sql } from '../../infra/database/client.js';
import { MAX_ANSWER_DEPTH, textNestsDeeperThan } from '../../infra/json-nesting.js';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type UpstreamBody,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import { findOpenApiOperationStanding } from '../db/openapi-apps.js';
import { NonPublicAddressError } from '../webhooks/endpoint-address.js';
import { mcpServerFetch, ResponseTooLargeError } from '../mcp-apps/server-fetch.js';
import { buildRequest, RequestBuildError, type OpenApiRequest } from '../openapi-apps/index.js';
import type { RequestCredential } from './operation-credential.js';
import { connectionOf } from './connection-scheme.js';

export interface OperationCallDeps {
  sql: Sql;
  timeoutMs: number;
  limitBytes: number;
  allowPrivate: boolean;
  /**
   * The user's connection, when the call sends its credential (the preparation settled it), as
   * the app's users now connect; absent: sent without one.
   */
  credential?: (kind: 'credential' | 'oauth2') => Promise<RequestCredential>;
}

export interface OperationCall {
  environmentId: string;
  app: string;
  action: string;
  scope: CallScope;
  input: unknown;
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

function parsedBody(bytes: Buffer): UpstreamBody {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return { kind: 'parsed', value: null };
  if (textNestsDeeperThan(text, MAX_ANSWER_DEPTH)) return { kind: 'parsed', value: text };
  try {
    return { kind: 'parsed', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'parsed', value: text };
  }
}

/**
 * Null when the environment has no OpenAPI app `call.app` (the caller then tries a remote MCP
 * app). The accepted descriptor is read again here: the call's preparation just checked it.
 */
export async function operationOutcome(
  deps: OperationCallDeps,
  call: OperationCall,
  context: Context | null,
): Promise<UpstreamOutcome | null> {
  const name = call.action.slice(call.app.length + 1);
  const standing = await findOpenApiOperationStanding(deps.sql, call.environmentId, call.app, name);
  if (!standing) return null;
  const descriptor = standing.accepted?.descriptors.find((one) => one.name === name);
  if (!descriptor) {
    throw ApplicationFailure.nonRetryable(
      `operation ${call.action} is in no accepted snapshot`,
      'UnknownAction',
    );
  }
  const write = call.scope !== 'read';
  if (write && context && !context.info.isLocal && context.info.attempt > 1) {
    throw failure(
      UPSTREAM_TIMEOUT,
      'the attempt that sent this write was lost; it is never sent again',
      true,
      false,
    );
  }
  let request: OpenApiRequest;
  try {
    request = buildRequest(descriptor, call.input);
  } catch (error) {
    if (!(error instanceof RequestBuildError)) throw error;
    throw ApplicationFailure.nonRetryable(
      `the request cannot be built (${error.field}: ${error.message})`,
      'UpstreamRequestFailed',
    );
  }
  const connection = connectionOf(standing.app, standing.accepted);
  const credential =
    deps.credential && (connection.kind === 'credential' || connection.kind === 'oauth2')
      ? await deps.credential(connection.kind)
      : undefined;
  const url = new URL(`${standing.app.baseUrl}${request.path}`);
  const baseHeaders = new Headers(request.headers ?? {});
  baseHeaders.set('accept', 'application/json');
  let body: string | undefined;
  if (request.body !== undefined) {
    body = JSON.stringify(request.body);
    if (!baseHeaders.has('content-type')) baseHeaders.set('content-type', 'application/json');
  }

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
  /** One request with the credential as it is now (`force`: refreshed first). */
  const send = async (force: boolean): Promise<Response | UpstreamOutcome> => {
    const headers = new Headers(baseHeaders);
    const query = new URLSearchParams();
    for (const [key, value] of request.queryPairs) query.append(key, value);
    const applied = await credential?.apply(headers, query, force);
    if (applied && !applied.ok) return { kind: 'connection', status: applied.status };
    const target = new URL(url.href);
    target.search = query.toString();
    try {
      return await fetcher(target.href, {
        method: request.method,
        headers: Object.fromEntries(headers),
        ...(body === undefined ? {} : { body }),
        signal,
      });
    } catch (error) {
      if (signal.aborted) {
        throw failure(
          UPSTREAM_TIMEOUT,
          `the app did not answer within ${String(deps.timeoutMs)} ms`,
          true,
          false,
        );
      }
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
    const status = response.status;
    const answerHeaders = Object.fromEntries(response.headers);
    let bytes: Buffer;
    try {
      bytes = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (error instanceof ResponseTooLargeError || cause instanceof ResponseTooLargeError) {
        return { kind: 'too_large', status, limitBytes: deps.limitBytes };
      }
      if (signal.aborted) {
        throw failure(
          UPSTREAM_TIMEOUT,
          `the app did not answer within ${String(deps.timeoutMs)} ms`,
          true,
          false,
        );
      }
      throw failure(UPSTREAM_UNREACHABLE, "the app's answer was cut off", true, !write);
    }
    return { kind: 'response', status, headers: answerHeaders, body: parsedBody(bytes) };
  } finally {
    clearInterval(beat);
  }
}
