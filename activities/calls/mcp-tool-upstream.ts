import { ApplicationFailure } from '@temporalio/activity';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { AccessTokenResult } from '../connections/access-token.js';
import type { McpApp } from '../db/mcp-apps.js';
import { answerReserveMs, TokenUnavailable } from './mcp-remote-task.js';
import { unrecordedAttempt, type ToolAttempt } from './mcp-tool-attempt.js';
import {
  callMcpTool,
  resumeMcpTask,
  type McpTaskCalling,
  type McpTaskSupport,
  type McpToolOutcome,
} from './mcp-tool-call.js';
import { failure } from './mcp-tool-result.js';

function refusal(status: number, value: unknown): UpstreamOutcome {
  return { kind: 'response', status, headers: {}, body: { kind: 'parsed', value } };
}

/** How often a write is tried while its `tools/call` provably never left. */
const WRITE_ATTEMPTS = 3;

function neverSent(error: unknown): boolean {
  if (!(error instanceof ApplicationFailure) || error.type !== UPSTREAM_UNREACHABLE) return false;
  const details = error.details?.[0] as UpstreamFailureDetails | undefined;
  return details?.sent === false;
}

export interface McpUpstreamCall {
  environmentId: string;
  /** null for a server that asks for no authorization (its calls need no connection). */
  connectionId: string | null;
  /** `<app>.<tool>`. */
  action: string;
  app: string;
  scope: CallScope;
  input: unknown;
}

/** The app as registered, and whether the tool may run as a task (the server's newest listing). */
export type McpToolTarget = Pick<McpApp, 'id' | 'serverUrl'> & {
  taskSupport?: McpTaskSupport | null;
};

export interface McpUpstreamDeps {
  findApp: (environmentId: string, id: string, tool: string) => Promise<McpToolTarget | null>;
  accessToken: (connectionId: string, options: { force?: boolean }) => Promise<AccessTokenResult>;
  /** Records a wider scope for the connection's reconnect; false when it was asked already. */
  stepUp: (connectionId: string, scope: string) => Promise<boolean>;
  timeoutMs: number;
  limitBytes: number;
  allowPrivate: boolean;
}

/**
 * Why nothing of an attempt that found no task recorded is sent again: the attempt before it
 * was lost (its worker died) at a moment that proves nothing about the call.
 */
const LOST_ATTEMPT =
  'the worker carrying out this call was lost while the call may have reached the MCP server; Gatehouse does not send it again';

/**
 * The upstream step of a call to a remote MCP server's tool: the app as registered,
 * the user's valid token (refreshed through `refresh/<id>` as for any connection; on a 401 one
 * forced refresh and one more try, as for catalog apps: a 401 means the server did nothing), and
 * one `tools/call`. A write is tried again only while nothing left: it may not happen twice.
 *
 * `attempt` is the activity attempt running it. A tool the server runs as a task is recorded in
 * its heartbeats; an attempt after a lost worker goes on waiting for the task recorded, and one
 * that finds none sends nothing: a write's failures here are final (never Temporal's to retry),
 * so a later attempt only ever follows a worker that was lost.
 */
export async function mcpToolUpstream(
  deps: McpUpstreamDeps,
  call: McpUpstreamCall,
  signal: AbortSignal,
  attempt: ToolAttempt = unrecordedAttempt(Number.POSITIVE_INFINITY),
): Promise<UpstreamOutcome> {
  try {
    return await upstream(deps, call, signal, attempt);
  } catch (error) {
    if (!attempt.durable || call.scope === 'read' || signal.aborted) throw error;
    throw finalFailure(error);
  }
}

/** The same failure, which Temporal must not answer with another attempt. */
function finalFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) {
    if (error.nonRetryable) return error;
    return ApplicationFailure.create({
      ...(error.type ? { type: error.type } : {}),
      message: error.message,
      nonRetryable: true,
      details: error.details ?? [],
      ...(error.cause ? { cause: error.cause } : {}),
    });
  }
  return ApplicationFailure.create({
    type: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    nonRetryable: true,
    ...(error instanceof Error ? { cause: error } : {}),
  });
}

async function upstream(
  deps: McpUpstreamDeps,
  call: McpUpstreamCall,
  signal: AbortSignal,
  attempt: ToolAttempt,
): Promise<UpstreamOutcome> {
  const tool = call.action.slice(call.app.length + 1);
  const earlier = attempt.durable ? attempt.earlier : null;
  if (earlier?.step === 'calling' && call.scope !== 'read') {
    throw failure(UPSTREAM_TIMEOUT, LOST_ATTEMPT, call.scope, true);
  }
  const app = await deps.findApp(call.environmentId, call.app, tool);
  if (earlier?.step === 'task') {
    if (!app) {
      throw failure(
        UPSTREAM_UNREACHABLE,
        `app "${call.app}" was removed while Gatehouse waited for its task ${earlier.task.taskId}; the tool may have run`,
        call.scope,
        true,
      );
    }
    return settled(
      await resumeMcpTask(
        {
          app,
          tool,
          scope: call.scope,
          allowPrivate: deps.allowPrivate,
          limitBytes: deps.limitBytes,
          signal,
          task: taskCalling(deps, call, attempt),
        },
        earlier.task,
      ),
      deps,
      call,
    );
  }
  if (!app) return { kind: 'connection', status: 'missing' };
  const deadline = Date.now() + deps.timeoutMs;
  const support = app.taskSupport ?? null;
  const once = async (force: boolean): Promise<McpToolOutcome> => {
    let accessToken: string | null = null;
    if (call.connectionId !== null) {
      const token = await deps.accessToken(call.connectionId, { force });
      if (!token.ok) {
        return token.refusedClient
          ? { kind: 'client_refused', ...token.refusedClient }
          : { kind: 'connection', status: token.status };
      }
      accessToken = token.accessToken;
    }
    return callMcpTool({
      app,
      tool,
      input: call.input,
      scope: call.scope,
      accessToken,
      deadline,
      limitBytes: deps.limitBytes,
      allowPrivate: deps.allowPrivate,
      signal,
      ...(support === null ? {} : { task: taskCalling(deps, call, attempt) }),
    });
  };
  for (let tries = 1; ; tries++) {
    signal.throwIfAborted();
    try {
      let outcome = await once(false);
      if (outcome.kind === 'unauthorized' && call.connectionId !== null) outcome = await once(true);
      return await settled(outcome, deps, call);
    } catch (error) {
      if (call.scope === 'read' || !neverSent(error) || tries >= WRITE_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** (tries - 1)));
    }
  }
}

/** How a tool the server may run as a task is waited for in this attempt. */
function taskCalling(
  deps: McpUpstreamDeps,
  call: McpUpstreamCall,
  attempt: ToolAttempt,
): McpTaskCalling {
  return {
    record: (task) => {
      attempt.record(task);
    },
    wait: {
      requestTimeoutMs: deps.timeoutMs,
      stopAt: attempt.endsAt - answerReserveMs(deps.timeoutMs),
      accessToken: async (force) => {
        if (call.connectionId === null) return null;
        const token = await deps.accessToken(call.connectionId, { force });
        if (!token.ok) {
          throw new TokenUnavailable(`the user's connection has no usable token (${token.status})`);
        }
        return token.accessToken;
      },
    },
  };
}

/** The outcome as the call workflow takes it: the server's refusals of the token settled here. */
async function settled(
  outcome: McpToolOutcome,
  deps: McpUpstreamDeps,
  call: McpUpstreamCall,
): Promise<UpstreamOutcome> {
  switch (outcome.kind) {
    case 'unauthorized':
      // Refused again with a fresh token: the server's own 401, as an app's would be.
      return refusal(401, null);
    case 'insufficient_scope':
      // Step-up: the user re-authorizes with the wider scope; asked for already and still not
      // granted, the server's 403 stands, as an app's would.
      return call.connectionId !== null && (await deps.stepUp(call.connectionId, outcome.scope))
        ? { kind: 'reauthorize', scope: outcome.scope }
        : refusal(403, { error: 'insufficient_scope', scope: outcome.scope });
    default:
      return outcome;
  }
}
