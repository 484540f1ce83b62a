/**
 * The upstream step of a call to an operation of an OpenAPI app: the request is built only by
 * the importer's buildRequest from the accepted snapshot's descriptor (method and path template
 * from the document, each value in its own place, nothing undeclared), sent to the app's pinned
 * base URL through the same guarded connection as a remote MCP server's (the address connected
 * to is checked, unless MCP_APPS_ALLOW_PRIVATE; no redirect followed), within
 * UPSTREAM_TIMEOUT_MS, and its answer read up to BODY_LIMIT_BYTES, as every call's is.
 *
 * Credentials: the operations callable today need none (operation-standing.ts). `credential`
 * is where a connection's credential will be added, as callUpstreamActivity adds a catalog
 * app's OAuth token: it receives the request's headers and query pairs before it is sent.
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

export interface OperationCallDeps {
  sql: Sql;
  timeoutMs: number;
  limitBytes: number;
  allowPrivate: boolean;
  /** Adds a connection's credential to the request; absent: the operation needs none. */
  credential?: (request: OpenApiRequest, headers: Headers, query: URLSearchParams) => Promise<void>;
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
  const url = new URL(`${standing.app.baseUrl}${request.path}`);
  const query = new URLSearchParams();
  for (const [key, value] of request.queryPairs) query.append(key, value);
  const headers = new Headers(request.headers ?? {});
  headers.set('accept', 'application/json');
  let body: string | undefined;
  if (request.body !== undefined) {
    body = JSON.stringify(request.body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  await deps.credential?.(request, headers, query);
  url.search = query.toString();

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
  try {
    const fetcher = mcpServerFetch({
      allowPrivate: deps.allowPrivate,
      maxResponseBytes: deps.limitBytes,
    });
    let response: Response;
    try {
      response = await fetcher(url.href, {
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
