import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorRequestHandler } from 'express';
import type { ErrorEnvelope } from '../../workflows/error-codes.js';

function isEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error: unknown = body.error;
  return typeof error === 'object' && error !== null && 'code' in error && 'message' in error;
}

/** JSON-RPC's code for a failure the transport never saw: the body, the key, the session. */
function rpcCode(status: number, envelope: ErrorEnvelope): number {
  const issues = Array.isArray(envelope.error.issues)
    ? (envelope.error.issues as { path?: unknown }[])
    : [];
  if (status === 400 && issues.some((issue) => issue.path === 'body')) return ErrorCode.ParseError;
  // The SDK's own code for an unknown or ended session, which tells a client to initialize anew.
  if (status === 404) return -32001;
  return status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
}

/**
 * Failures answered before the MCP transport takes a request (unreadable body, missing key,
 * ended session, unknown `Mcp-Session-Id`) keep their HTTP status and headers, but their body
 * is a JSON-RPC error, as an MCP client expects: Gatehouse's envelope goes in `error.data`.
 * The error continues to the app's one error handler, which logs it and picks the status; only
 * the shape of the body it writes changes here.
 */
export const jsonRpcErrorBodies: ErrorRequestHandler = (err, _req, res, next) => {
  const json = res.json.bind(res);
  res.json = ((body: unknown) =>
    json(
      isEnvelope(body)
        ? {
            jsonrpc: '2.0',
            id: null,
            error: {
              code: rpcCode(res.statusCode, body),
              message: body.error.message,
              data: body.error,
            },
          }
        : body,
    )) as typeof res.json;
  next(err);
};
