import { ApplicationFailure } from '@temporalio/activity';
import type {
  CallToolResult,
  CompatibilityCallToolResult,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_ANSWER_DEPTH, valueNestsDeeperThan } from '../../infra/json-nesting.js';
import {
  UPSTREAM_TIMEOUT,
  type UPSTREAM_UNREACHABLE,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';

/**
 * What one `tools/call` came to; or the server refused the token (`unauthorized`), or wants a
 * scope the token lacks (`insufficient_scope`, its WWW-Authenticate challenge's).
 */
export type McpToolOutcome =
  UpstreamOutcome | { kind: 'unauthorized' } | { kind: 'insufficient_scope'; scope: string };

/** Errors that prove a request never left this machine. */
export const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/**
 * A result nested deeper than an answer may be: the SDK parses any depth, but the call's
 * Temporal payload and audit row would overflow JSON.stringify's stack, and the same answer
 * would come again, so it is refused now rather than failing each retry until the caller's wait
 * ends.
 */
export const TOO_DEEP = {
  kind: 'unusable',
  status: 200,
  reason: `the MCP server's answer nests deeper than ${String(MAX_ANSWER_DEPTH)} levels`,
} as const satisfies UpstreamOutcome;

export function failure(
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

/** Where MCP tasks say which task a message belongs to: plumbing, not the tool's answer. */
const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/**
 * A tool's result as the caller gets it: `{ok: true, data}`, or with `isError: true` the app's
 * failure `{ok: false, data}`. A task's result (`tasks/result`) is answered the same way, less
 * the task's own `_meta` key, so a tool run as a task answers as it would have plainly.
 */
export function toolResultOutcome(
  result: CallToolResult | CompatibilityCallToolResult,
): UpstreamOutcome {
  const { isError, ...data } = result;
  if (data._meta && RELATED_TASK_META in data._meta) {
    const meta = Object.fromEntries(
      Object.entries(data._meta).filter(([key]) => key !== RELATED_TASK_META),
    );
    if (Object.keys(meta).length > 0) data._meta = meta;
    else delete data._meta;
  }
  if (valueNestsDeeperThan(data, MAX_ANSWER_DEPTH)) return TOO_DEEP;
  return {
    kind: 'response',
    status: 200,
    headers: {},
    body: { kind: 'parsed', value: data },
    ...(isError === true ? { reportsFailure: true } : {}),
  };
}

/** A JSON-RPC error: the server answered, refusing the call (unknown tool, bad arguments). */
export function jsonRpcErrorOutcome(error: McpError): UpstreamOutcome {
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
