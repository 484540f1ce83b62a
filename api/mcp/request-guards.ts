import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { InvalidRequestError } from '../errors.js';

/**
 * JSON-RPC 2.0 §6: "an Array with at least one value"; an empty one is answered with a single
 * Response object (Invalid Request, id null), where the SDK's transport, seeing no request in
 * it, would answer 202 with nothing. Thrown before the transport, it keeps the 400 and becomes
 * that JSON-RPC error (json-rpc-errors.ts).
 */
export function refuseEmptyBatch(body: unknown): void {
  if (Array.isArray(body) && body.length === 0) {
    throw new InvalidRequestError(
      'Invalid Request: an empty JSON-RPC batch holds no message; send one request object.',
    );
  }
}

/**
 * What `tools/call` needs of its params, with messages for a person. The SDK parses the same
 * with its own schema first, and a failure there is answered -32603 with the validator's dump;
 * this answers -32602 (Invalid params) naming the field instead.
 */
const toolCallParams = z.looseObject({
  name: z.string({ error: 'must be the name of a tool, as a string' }),
  arguments: z
    .record(z.string(), z.unknown(), {
      error: 'must be an object of the tool’s arguments by name',
    })
    .optional(),
  // A task-augmented call (MCP tasks): `ttl` in milliseconds, if the client asks for one.
  task: z
    .looseObject(
      {
        ttl: z
          .number({ error: 'must be a number of milliseconds' })
          .int({ error: 'must be a whole number of milliseconds' })
          .nonnegative({ error: 'must not be negative' })
          .optional(),
      },
      { error: 'must be an object ({"ttl": milliseconds} or {})' },
    )
    .optional(),
});

/** `tasks/get`, `tasks/result`, `tasks/cancel`: the task is named by its id alone. */
const taskParams = z.looseObject({
  taskId: z.string({ error: 'must be a task id, as a string' }).max(200, {
    error: 'is longer than any task id',
  }),
});

const listToolsParams = z
  .looseObject({ cursor: z.string({ error: 'must be a string from nextCursor' }).optional() })
  .optional();

const PARAMS: Record<string, z.ZodType> = {
  'tools/call': toolCallParams,
  'tools/list': listToolsParams,
  'tasks/get': taskParams,
  'tasks/result': taskParams,
  'tasks/cancel': taskParams,
  'tasks/list': listToolsParams,
};

function paramsProblem(request: JSONRPCRequest): string | null {
  const schema = PARAMS[request.method];
  if (!schema) return null;
  const params: unknown = request.params;
  if (params !== undefined && (typeof params !== 'object' || params === null)) {
    return `Invalid params for ${request.method}: params must be an object.`;
  }
  const parsed = schema.safeParse(params);
  if (parsed.success) return null;
  const named = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    return field ? `${field} ${issue.message}` : issue.message;
  });
  return `Invalid params for ${request.method}: ${named.join('; ')}.`;
}

/**
 * Answers requests whose params the SDK would fail to parse with -32602 and a short message,
 * on the request's own stream, before the server sees them. Call after `server.connect`, which
 * installs the handler this wraps.
 */
export function guardRequestParams(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('guardRequestParams: connect the server to the transport first');
  transport.onmessage = (message: JSONRPCMessage, extra?: Parameters<typeof deliver>[1]) => {
    const problem = isJSONRPCRequest(message) ? paramsProblem(message) : null;
    if (problem === null || !isJSONRPCRequest(message)) {
      deliver(message, extra);
      return;
    }
    void transport.send(
      {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: ErrorCode.InvalidParams, message: problem },
      },
      { relatedRequestId: message.id },
    );
  };
}
