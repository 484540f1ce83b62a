import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
  ResultSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import { UPSTREAM_TIMEOUT, UPSTREAM_UNREACHABLE } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { McpApp } from '../db/mcp-apps.js';
import { MAX_REMOTE_ID_LENGTH, type RemoteTaskRecord } from './mcp-tool-attempt.js';
import { awaitRemoteTask, waitUntil, type TaskWait } from './mcp-remote-task.js';
import { AnswerTooLarge, openMcpSession, type McpSession } from './mcp-session.js';
import {
  NOT_SENT,
  causeCode,
  failure,
  jsonRpcErrorOutcome,
  toolResultOutcome,
  type McpToolOutcome,
} from './mcp-tool-result.js';

export type { McpToolOutcome } from './mcp-tool-result.js';

/** A tool's `execution.taskSupport` in the server's listing, when it may run as a task. */
export type McpTaskSupport = 'optional' | 'required';

/**
 * How a tool the server may run as a task is called and waited for. `wait` bounds the polling
 * (its `stopAt` this attempt's end); `record` is told the task the moment the server creates
 * it, before anything is waited for.
 */
export interface McpTaskCalling {
  wait: Omit<TaskWait, 'serverUrl' | 'allowPrivate' | 'limitBytes' | 'scope' | 'signal'>;
  record(task: RemoteTaskRecord): void;
}

export interface McpToolRequest {
  app: Pick<McpApp, 'id' | 'serverUrl'>;
  tool: string;
  input: unknown;
  scope: CallScope;
  /** The user's access token; null for a server that asks for no authorization. */
  accessToken: string | null;
  /** MCP_APPS_ALLOW_PRIVATE: whether the server may be on a loopback or private address. */
  allowPrivate: boolean;
  /** When the wait for the answer to `tools/call` (a result, or a task created) ends (epoch ms). */
  deadline: number;
  limitBytes: number;
  /** Aborted when Temporal gives up on the attempt. */
  signal: AbortSignal;
  /** Absent: the tool is called plainly, whatever the server supports. */
  task?: McpTaskCalling;
}

/** The server created a task, or answered at once (a server may run the call plainly after all). */
type Created =
  | { kind: 'task'; task: Task; record: RemoteTaskRecord }
  | { kind: 'answered'; outcome: McpToolOutcome };

function idProblem(id: string): boolean {
  return id.length === 0 || id.length > MAX_REMOTE_ID_LENGTH;
}

/**
 * A task-augmented `tools/call` (MCP tasks): the server answers a CreateTaskResult, which is
 * recorded at once, or, declining the task, the tool's result as a plain call would.
 */
async function createTask(
  session: McpSession,
  request: McpToolRequest & { task: McpTaskCalling },
  options: { timeout: number; signal: AbortSignal },
): Promise<Created> {
  const createdAt = Date.now();
  const wanted = Math.max(
    1000,
    Math.min(waitUntil(createdAt, null), request.task.wait.stopAt) - createdAt,
  );
  const raw = await session.client.request(
    {
      method: 'tools/call',
      params: { name: request.tool, arguments: (request.input ?? {}) as Record<string, unknown> },
    },
    ResultSchema,
    { ...options, task: { ttl: wanted } },
  );
  if (!('task' in raw)) {
    // Parsed as the SDK's callTool parses a result; a malformed one fails as it would.
    return { kind: 'answered', outcome: toolResultOutcome(CallToolResultSchema.parse(raw)) };
  }
  const created = CreateTaskResultSchema.safeParse(raw);
  if (!created.success || idProblem(created.data.task.taskId)) {
    await cancelMalformed(session, raw, options);
    return {
      kind: 'answered',
      outcome: {
        kind: 'unusable',
        status: 200,
        reason: `the MCP server answered tools/call with a task it did not describe as MCP says (${
          created.success ? 'an unusable task id' : created.error.message.slice(0, 300)
        })`,
      },
    };
  }
  const { task } = created.data;
  const sessionId = session.transport.sessionId ?? null;
  const protocolVersion = session.transport.protocolVersion ?? null;
  const record: RemoteTaskRecord = {
    taskId: task.taskId,
    sessionId: sessionId !== null && idProblem(sessionId) ? null : sessionId,
    protocolVersion:
      protocolVersion !== null && idProblem(protocolVersion) ? null : protocolVersion,
    until: waitUntil(createdAt, task.ttl),
  };
  request.task.record(record);
  return { kind: 'task', task, record };
}

/**
 * Best effort, for a CreateTaskResult Gatehouse cannot follow that still names a usable task id:
 * the server is told the call is not waited for.
 */
async function cancelMalformed(
  session: McpSession,
  raw: Record<string, unknown>,
  options: { timeout: number; signal: AbortSignal },
): Promise<void> {
  const taskId = (raw.task as { taskId?: unknown } | null | undefined)?.taskId;
  if (typeof taskId !== 'string' || idProblem(taskId)) return;
  await session.client
    .request({ method: 'tasks/cancel', params: { taskId } }, ResultSchema, options)
    .catch(() => undefined);
}

/** Whether the server said, at `initialize`, that it runs `tools/call` as tasks. */
function runsToolCallsAsTasks(session: McpSession): boolean {
  return session.client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
}

/**
 * Up to the answer to `tools/call`: initialize, then the call, plainly or task-augmented, all
 * within `request.deadline`. Failures become outcomes here, or the ApplicationFailures that say
 * whether the call may have left.
 */
async function startCall(session: McpSession, request: McpToolRequest): Promise<Created> {
  let sending: 'initialize' | 'tools/call' = 'initialize';
  const remaining = () => Math.max(1, request.deadline - Date.now());
  // The SDK's own timeouts bound each request; this bounds the whole call, however its steps go.
  const deadline = deadlineSignal(remaining(), request.signal, session.overLimit);
  const { signal } = deadline;
  try {
    await session.client.connect(session.transport, { timeout: remaining(), signal });
    sending = 'tools/call';
    const { task } = request;
    if (task && runsToolCallsAsTasks(session)) {
      return await createTask(session, { ...request, task }, { timeout: remaining(), signal });
    }
    const result = await session.client.callTool(
      { name: request.tool, arguments: (request.input ?? {}) as Record<string, unknown> },
      undefined,
      { timeout: remaining(), signal },
    );
    return { kind: 'answered', outcome: toolResultOutcome(result) };
  } catch (error) {
    if (
      error instanceof StreamableHTTPError &&
      error.code === 403 &&
      session.scopeChallenge !== null
    ) {
      return {
        kind: 'answered',
        outcome: { kind: 'insufficient_scope', scope: session.scopeChallenge },
      };
    }
    return {
      kind: 'answered',
      outcome: outcomeOfFailure(session.tooLarge ?? error, request, sending),
    };
  } finally {
    // Cleared, never fired later: a created task is waited for under bounds of its own.
    deadline.clear();
  }
}

/**
 * One `tools/call` on a remote MCP server registered as an app, with the official
 * SDK client over Streamable HTTP: initialize, call, close. Nothing of the MCP session outlives
 * the attempt in workflow state (a task's session is in the attempt's heartbeat details only).
 * The answer becomes what an action's app answer becomes: a result is `{ok: true, data}`,
 * `isError: true` is `{ok: false, data}`, a JSON-RPC error from the server is
 * `{ok: false, data: {error}}`, and the server's HTTP failures keep their status so 400, 429,
 * 502, 503 and 504 become the `upstream_*` errors. A failure before `tools/call` was sent (the
 * server unreachable while initializing) says nothing left.
 *
 * A tool the listing says may run as a task (`execution.taskSupport`), on a server that said at
 * `initialize` that it runs tool calls as tasks, is called task-augmented: the server's task is
 * recorded (`request.task.record`) and waited for on the same connection
 * (activities/mcp-tasks/remote-task.ts), and its result answered exactly as a plain result.
 * `deadline` then bounds the call up to the task's creation; each later request on its own.
 */
export async function callMcpTool(request: McpToolRequest): Promise<McpToolOutcome> {
  const session = openMcpSession({
    serverUrl: request.app.serverUrl,
    accessToken: request.accessToken,
    allowPrivate: request.allowPrivate,
    limitBytes: request.limitBytes,
  });
  try {
    const started = await startCall(session, request);
    if (started.kind === 'answered') return started.outcome;
    const calling = request.task as McpTaskCalling;
    return await awaitRemoteTask(session, started.record, started.task, {
      ...calling.wait,
      serverUrl: request.app.serverUrl,
      allowPrivate: request.allowPrivate,
      limitBytes: request.limitBytes,
      scope: request.scope,
      signal: request.signal,
    });
  } finally {
    await session.close();
  }
}

/**
 * Goes on waiting for a task an earlier attempt created and recorded, in the session it was
 * created in: the tool is not called again.
 */
export async function resumeMcpTask(
  request: Omit<McpToolRequest, 'input' | 'accessToken' | 'deadline' | 'task'> & {
    task: McpTaskCalling;
  },
  record: RemoteTaskRecord,
): Promise<McpToolOutcome> {
  return awaitRemoteTask(null, record, null, {
    ...request.task.wait,
    serverUrl: request.app.serverUrl,
    allowPrivate: request.allowPrivate,
    limitBytes: request.limitBytes,
    scope: request.scope,
    signal: request.signal,
  });
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
    return jsonRpcErrorOutcome(error);
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
