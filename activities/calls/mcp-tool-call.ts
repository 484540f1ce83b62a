import { ApplicationFailure } from '@temporalio/activity';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import { MAX_ANSWER_DEPTH, valueNestsDeeperThan } from '../../infra/json-nesting.js';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { McpApp } from '../db/mcp-apps.js';
import { mcpServerFetch } from '../mcp-apps/server-fetch.js';

/** Errors that prove a request never left this machine. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** The server's answer grew past the body limit while it was read. */
class AnswerTooLarge extends Error {
  constructor() {
    super('the answer is over the body limit');
  }
}

/**
 * The fetch of the SDK's transport: the registry's guarded one (the address connected to is
 * checked, as for webhooks, unless MCP_APPS_ALLOW_PRIVATE; answers cut at `limitBytes`, since a
 * tool's result travels through the call workflow and a larger one must fail here with 413, not
 * in Temporal). The transport reads streamed answers on its own and only reports their failure,
 * so `tripped` is told at once and ends the wait; and it keeps only the status of a refusal, so
 * a 403 is shown to `challenged` for its scope challenge.
 */
function toolCallFetch(
  options: { allowPrivate: boolean; limitBytes: number },
  tripped: () => void,
  challenged: (response: Response) => void,
): FetchLike {
  const guarded = mcpServerFetch({
    allowPrivate: options.allowPrivate,
    maxResponseBytes: options.limitBytes,
    onTooLarge: tripped,
  });
  return async (input, init) => {
    const response = await guarded(input, init);
    if (response.status === 403) challenged(response);
    return response;
  };
}

/**
 * A result nested deeper than an answer may be: the SDK parses any depth, but the call's
 * Temporal payload and audit row would overflow JSON.stringify's stack, and the same answer
 * would come again, so it is refused now rather than failing each retry until the caller's wait
 * ends.
 */
const TOO_DEEP = {
  kind: 'unusable',
  status: 200,
  reason: `the MCP server's answer nests deeper than ${String(MAX_ANSWER_DEPTH)} levels`,
} as const satisfies UpstreamOutcome;

export interface McpToolRequest {
  app: Pick<McpApp, 'id' | 'serverUrl'>;
  tool: string;
  input: unknown;
  scope: CallScope;
  /** The user's access token; null for a server that asks for no authorization. */
  accessToken: string | null;
  /** MCP_APPS_ALLOW_PRIVATE: whether the server may be on a loopback or private address. */
  allowPrivate: boolean;
  /** When the caller's wait for the app ends (epoch ms). */
  deadline: number;
  limitBytes: number;
  /** Aborted when Temporal gives up on the attempt. */
  signal: AbortSignal;
}

/**
 * What one `tools/call` came to; or the server refused the token (`unauthorized`), or wants a
 * scope the token lacks (`insufficient_scope`, its WWW-Authenticate challenge's).
 */
export type McpToolOutcome =
  UpstreamOutcome | { kind: 'unauthorized' } | { kind: 'insufficient_scope'; scope: string };

function failure(
  type: typeof UPSTREAM_TIMEOUT | typeof UPSTREAM_UNREACHABLE,
  message: string,
  scope: CallScope,
  sent: boolean,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    // A write that may have reached the server is never tried again; a read is (Temporal's
    // retries), and so is a write that provably never left (the caller's loop).
    nonRetryable: type === UPSTREAM_TIMEOUT || (scope !== 'read' && sent),
    details: [{ sent } satisfies UpstreamFailureDetails],
  });
}

/**
 * One `tools/call` on a remote MCP server registered as an app, with the official
 * SDK client over Streamable HTTP: initialize, call, close. Nothing of the MCP session outlives
 * the attempt (no session in workflow state). The answer becomes what an action's app answer
 * becomes: a result is `{ok: true, data}`, `isError: true` is `{ok: false, data}`, a JSON-RPC
 * error from the server is `{ok: false, data: {error}}`, and the server's HTTP failures keep
 * their status so 400, 429, 502, 503 and 504 become the `upstream_*` errors. A failure before
 * `tools/call` was sent (the server unreachable while initializing) says nothing left.
 */
export async function callMcpTool(request: McpToolRequest): Promise<McpToolOutcome> {
  const headers: Record<string, string> = request.accessToken
    ? { authorization: `Bearer ${request.accessToken}` }
    : {};
  // Set by the fetch while the transport reads: an object, as TS does not see the assignment.
  const over: { error: AnswerTooLarge | null; scope: string | null } = { error: null, scope: null };
  const overLimit = new AbortController();
  const transport = new StreamableHTTPClientTransport(new URL(request.app.serverUrl), {
    requestInit: { headers, redirect: 'manual' },
    fetch: toolCallFetch(
      request,
      () => {
        over.error = new AnswerTooLarge();
        overLimit.abort(over.error);
      },
      (response) => {
        const challenge = extractWWWAuthenticateParams(response);
        if (challenge.error === 'insufficient_scope' && challenge.scope) {
          over.scope = challenge.scope;
        }
      },
    ),
  });
  const client = new Client({ name: 'gatehouse', version: '1.0.0' });
  let sending: 'initialize' | 'tools/call' = 'initialize';
  const remaining = () => Math.max(1, request.deadline - Date.now());
  // The SDK's own timeouts bound each request; this bounds the whole call, however its steps go.
  const deadline = deadlineSignal(remaining(), request.signal, overLimit.signal);
  const { signal } = deadline;
  try {
    await client.connect(transport, { timeout: remaining(), signal });
    sending = 'tools/call';
    const result = await client.callTool(
      { name: request.tool, arguments: (request.input ?? {}) as Record<string, unknown> },
      undefined,
      { timeout: remaining(), signal },
    );
    const { isError, ...data } = result;
    if (valueNestsDeeperThan(data, MAX_ANSWER_DEPTH)) return TOO_DEEP;
    return {
      kind: 'response',
      status: 200,
      headers: {},
      body: { kind: 'parsed', value: data },
      ...(isError === true ? { reportsFailure: true } : {}),
    };
  } catch (error) {
    if (error instanceof StreamableHTTPError && error.code === 403 && over.scope !== null) {
      return { kind: 'insufficient_scope', scope: over.scope };
    }
    return outcomeOfFailure(over.error ?? error, request, sending);
  } finally {
    await client.close().catch(() => undefined);
    deadline.clear();
  }
}

function outcomeOfFailure(
  error: unknown,
  request: McpToolRequest,
  sending: 'initialize' | 'tools/call',
): McpToolOutcome {
  const { scope } = request;
  const beforeCall = sending === 'initialize';
  if (error instanceof AnswerTooLarge) {
    return { kind: 'too_large', status: 200, limitBytes: request.limitBytes };
  }
  if (error instanceof StreamableHTTPError && error.code === 401) return { kind: 'unauthorized' };
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400) {
    // The server refused the request itself: what it said, with its status (the transport keeps
    // its body in the message).
    return {
      kind: 'response',
      status: error.code,
      headers: {},
      body: { kind: 'parsed', value: { error: error.message } },
    };
  }
  if (
    (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) ||
    (error instanceof DOMException && error.name === 'TimeoutError')
  ) {
    throw failure(
      UPSTREAM_TIMEOUT,
      `the MCP server did not answer ${sending} in time`,
      scope,
      !beforeCall,
    );
  }
  if (error instanceof McpError && sending === 'tools/call') {
    // A JSON-RPC error: the server answered, refusing the call (unknown tool, bad arguments).
    if (valueNestsDeeperThan(error.data, MAX_ANSWER_DEPTH)) return TOO_DEEP;
    return {
      kind: 'response',
      status: 200,
      headers: {},
      body: {
        kind: 'parsed',
        value: { error: { code: error.code, message: error.message, data: error.data } },
      },
      reportsFailure: true,
    };
  }
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const code = causeCode(error);
    // Unreachable while initializing: tools/call never left. While calling: it may have, unless
    // the connection was refused outright.
    const sent = !beforeCall && !NOT_SENT.has(code ?? '');
    throw failure(
      UPSTREAM_UNREACHABLE,
      `the MCP server could not be reached (${code ?? 'network error'})`,
      scope,
      sent,
    );
  }
  if (request.signal.aborted) throw error;
  // Anything else while the call was out may have reached the server: a cut-off answer.
  throw failure(
    UPSTREAM_UNREACHABLE,
    `the MCP server's answer to ${sending} failed (${error instanceof Error ? error.message : 'unknown'})`,
    scope,
    !beforeCall,
  );
}
