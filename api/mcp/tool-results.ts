import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiError } from '../errors.js';

/**
 * A tool result: `structuredContent` for programs, and (as MCP asks of a tool that returns
 * structured content) the same as JSON text, after a sentence for the model when there is one.
 * `isError` is true whenever the app did not do what was asked: it failed, or the call did not
 * reach it (held, denied, not connected, refused).
 */
export function toolResult(
  structured: Record<string, unknown>,
  options: { message?: string; isError: boolean },
): CallToolResult {
  const json = { type: 'text' as const, text: JSON.stringify(structured) };
  return {
    content:
      options.message === undefined ? [json] : [{ type: 'text', text: options.message }, json],
    structuredContent: structured,
    ...(options.isError ? { isError: true } : {}),
  };
}

/** The run's own answer (`{ok, data}`, and `upstream_status` when the app refused the call). */
export function appAnswerResult(appName: string, body: Record<string, unknown>): CallToolResult {
  if (body.ok === true) return toolResult(body, { isError: false });
  const status = typeof body.upstream_status === 'number' ? ` ${String(body.upstream_status)}` : '';
  return toolResult(body, {
    message: `${appName} answered with a failure (status${status}); its answer is in "data".`,
    isError: true,
  });
}

/** A failure in Gatehouse's own error envelope, with its code and fields as over REST. */
export function envelopeResult(error: ApiError, message = error.message): CallToolResult {
  return toolResult(
    { error: { ...error.toEnvelope().error, message } },
    { message: `${message} (${error.code})`, isError: true },
  );
}
