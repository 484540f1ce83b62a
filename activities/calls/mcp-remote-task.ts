/**
 * Waiting for a task a remote MCP server runs a tool as (MCP 2025-11-25, "Tasks"): `tasks/get`
 * at the interval the server asks for, `tasks/result` once it completed, `tasks/cancel` when
 * Gatehouse gives up on it. Each request is bounded by UPSTREAM_TIMEOUT_MS; the whole wait by
 * the task's own lifetime (its ttl), by MAX_TASK_WAIT_MS and by what is left of the attempt.
 * A request that fails on the way (a dropped connection, a 5xx, a slow answer) is asked again
 * while there is time: the task goes on at the server whatever happens to one poll.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ErrorCode,
  GetTaskResultSchema,
  McpError,
  ResultSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import { UPSTREAM_TIMEOUT, UPSTREAM_UNREACHABLE } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import { openMcpSession, type McpSession } from './mcp-session.js';
import {
  failure,
  jsonRpcErrorOutcome,
  toolResultOutcome,
  type McpToolOutcome,
} from './mcp-tool-result.js';
import type { RemoteTaskRecord } from './mcp-tool-attempt.js';

/**
 * The longest Gatehouse waits for one remote task, from its creation, whatever its ttl says:
 * the caller's answer waits in the call's workflow that long, and the write activity's time
 * limit (workflows/call.ts) is set above it.
 */
export const MAX_TASK_WAIT_MS = 60 * 60 * 1000;

/** The server's pollInterval, kept within these: neither a stream of polls nor a stall. */
const MIN_POLL_MS = 250;
const MAX_POLL_MS = 30_000;
/** Until the server says otherwise (the SDK's own default). */
const DEFAULT_POLL_MS = 1_000;

/** A status message is a reason, not data: longer ones are cut. */
const MAX_STATUS_MESSAGE = 2_000;

/**
 * What an attempt keeps back from its time limit once it waits for a task: a poll in flight, then
 * `tasks/result` or `tasks/cancel`, each bounded by UPSTREAM_TIMEOUT_MS, and the answer.
 */
export function answerReserveMs(requestTimeoutMs: number): number {
  return 3 * requestTimeoutMs + 5_000;
}

export interface TaskWait {
  serverUrl: string;
  allowPrivate: boolean;
  limitBytes: number;
  scope: CallScope;
  /** Each request's bound (UPSTREAM_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** When this attempt stops waiting, whatever the record says (epoch ms). */
  stopAt: number;
  /** Aborted when Temporal gives up on the attempt: another attempt may go on with the task. */
  signal: AbortSignal;
  /**
   * A token for a new connection to the server (null: it asks for none); `force` after the
   * server refused the last one. Throws TokenUnavailable when the user's connection has none.
   */
  accessToken(force: boolean): Promise<string | null>;
}

/** The user's connection could give no token while a task was waited for. */
export class TokenUnavailable extends Error {}

function cut(text: string): string {
  return text.length > MAX_STATUS_MESSAGE ? `${text.slice(0, MAX_STATUS_MESSAGE)}…` : text;
}

function pollDelay(task: Pick<Task, 'pollInterval'>): number {
  const asked = task.pollInterval;
  if (asked === undefined || !Number.isFinite(asked)) return DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, asked));
}

/**
 * When to stop waiting for a task created now: its ttl (after which the server may forget it
 * and its result) and MAX_TASK_WAIT_MS, whichever comes first.
 */
export function waitUntil(createdAt: number, ttl: number | null): number {
  const lifetime = ttl !== null && Number.isFinite(ttl) ? Math.max(0, ttl) : MAX_TASK_WAIT_MS;
  return createdAt + Math.min(lifetime, MAX_TASK_WAIT_MS);
}

/**
 * The task Gatehouse waited for failed or was cancelled: the server's status message says why,
 * else what `tasks/result` refused with (`error`), if anything.
 */
function taskFailed(task: Task, error: string | null): McpToolOutcome {
  const statusMessage = task.statusMessage === undefined ? null : cut(task.statusMessage);
  const what = task.status === 'cancelled' ? 'was cancelled' : 'failed';
  const reason = statusMessage ?? (error === null ? null : cut(error));
  return {
    kind: 'response',
    status: 200,
    headers: {},
    body: {
      kind: 'parsed',
      value: {
        error: {
          message: `The MCP server's task ${what}${reason ? `: ${reason}` : ' (the server gave no reason)'}`,
          task: { id: task.taskId, status: task.status, status_message: statusMessage },
        },
      },
    },
    reportsFailure: true,
  };
}

type PollFault =
  /** Worth asking again after a pause. */
  | { kind: 'transient' }
  /** The token was refused: a fresh one, then again. */
  | { kind: 'unauthorized' }
  /** The server does not know the session (any more): a new one, then again. */
  | { kind: 'no_session' }
  /** The server no longer knows the task, or will not tell: the tool may have run. */
  | { kind: 'lost'; why: string }
  /** The answer is no answer to the request: the server is not keeping to MCP. */
  | { kind: 'malformed'; why: string };

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What a failed `tasks/get` (or `tasks/result`) means for the wait. A JSON-RPC error is the
 * server's own word about the task (`-32602`: no such task); the SDK's own timeout comes as one
 * too (`-32001`) and is only a slow answer.
 */
function faultOf(error: unknown, session: McpSession): PollFault {
  if (session.tooLarge) return { kind: 'malformed', why: 'an answer over the body limit' };
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401) return { kind: 'unauthorized' };
    if (error.code === 404) return { kind: 'no_session' };
    if (error.code === 403) return { kind: 'lost', why: `refused with 403 (${describe(error)})` };
    return { kind: 'transient' };
  }
  if (error instanceof McpError && error.code !== (ErrorCode.RequestTimeout as number)) {
    return { kind: 'lost', why: `answered JSON-RPC error ${String(error.code)}: ${error.message}` };
  }
  return { kind: 'transient' };
}

type Fetched =
  | { kind: 'result'; outcome: McpToolOutcome }
  | { kind: 'error'; error: McpError }
  | { kind: 'unusable'; why: string }
  | { kind: 'too_large' }
  | { kind: 'transient' };

/**
 * Waits for the remote task `record` names until it ends or the wait's bounds pass. `session`
 * is the connection that created it, or null to reconnect to the session it was created in (an
 * attempt after a lost worker); `first` is the task as the server created it, if at hand.
 * Answers what the task came to, as a plain `tools/call` answers; throws an ApplicationFailure
 * (`sent`, since the tool may have run) when the task cannot be followed to its end.
 */
export async function awaitRemoteTask(
  session: McpSession | null,
  record: RemoteTaskRecord,
  first: Task | null,
  wait: TaskWait,
): Promise<McpToolOutcome> {
  const taskId = record.taskId;
  const stopAt = Math.min(record.until, wait.stopAt);
  /** Connections opened here, all closed at the end (the caller closes its own). */
  const opened: McpSession[] = [];
  let refusedAgain = false;
  let freshSessionTried = record.sessionId === null;

  const open = async (force: boolean, keepSession: boolean): Promise<McpSession> => {
    const resumed = openMcpSession({
      serverUrl: wait.serverUrl,
      accessToken: await wait.accessToken(force),
      allowPrivate: wait.allowPrivate,
      limitBytes: wait.limitBytes,
      ...(keepSession && record.sessionId !== null
        ? { resume: { sessionId: record.sessionId, protocolVersion: record.protocolVersion } }
        : {}),
    });
    opened.push(resumed);
    const bound = deadlineSignal(wait.requestTimeoutMs, wait.signal, resumed.overLimit);
    try {
      // With a session, only attaches; without one, `initialize` as any call does.
      await resumed.client.connect(resumed.transport, {
        timeout: wait.requestTimeoutMs,
        signal: bound.signal,
      });
    } finally {
      bound.clear();
    }
    return resumed;
  };

  /** One request on a connection, bounded by UPSTREAM_TIMEOUT_MS. */
  const ask = async (
    current: McpSession,
    method: 'tasks/get' | 'tasks/result' | 'tasks/cancel',
  ): Promise<Record<string, unknown>> => {
    const bound = deadlineSignal(wait.requestTimeoutMs, wait.signal, current.overLimit);
    try {
      return await current.client.request({ method, params: { taskId } }, ResultSchema, {
        timeout: wait.requestTimeoutMs,
        signal: bound.signal,
      });
    } finally {
      bound.clear();
    }
  };

  /**
   * Best effort, on the connection at hand or a new one to the task's session: a server that
   * cannot be told still ends the task at its ttl.
   */
  const cancel = async (current: McpSession | null): Promise<void> => {
    const told = current ?? (await open(false, true).catch(() => null));
    if (told) await ask(told, 'tasks/cancel').catch(() => undefined);
  };

  /** `tasks/result`: what the tool call would have answered (its result, or its error). */
  const fetchResult = async (current: McpSession): Promise<Fetched> => {
    try {
      const parsed = CallToolResultSchema.safeParse(await ask(current, 'tasks/result'));
      if (!parsed.success) return { kind: 'unusable', why: parsed.error.message.slice(0, 300) };
      return { kind: 'result', outcome: toolResultOutcome(parsed.data) };
    } catch (error) {
      wait.signal.throwIfAborted();
      if (current.tooLarge) return { kind: 'too_large' };
      if (error instanceof McpError && error.code !== (ErrorCode.RequestTimeout as number)) {
        return { kind: 'error', error };
      }
      return { kind: 'transient' };
    }
  };

  const lost = (why: string): never => {
    throw failure(
      UPSTREAM_UNREACHABLE,
      `the MCP server's task ${taskId} could not be followed to its end (${why}); the tool may have run`,
      wait.scope,
      true,
    );
  };

  let current = session;
  let task: Task | null = first;
  let delay = first ? pollDelay(first) : 0;
  let faults = 0;
  const backoff = () => Math.min(MAX_POLL_MS, DEFAULT_POLL_MS * 2 ** Math.min(faults++, 5));
  try {
    for (;;) {
      if (task?.status === 'completed' && current) {
        const fetched = await fetchResult(current);
        switch (fetched.kind) {
          case 'result':
            return fetched.outcome;
          case 'error':
            return jsonRpcErrorOutcome(fetched.error);
          case 'too_large':
            return { kind: 'too_large', status: 200, limitBytes: wait.limitBytes };
          case 'unusable':
            return {
              kind: 'unusable',
              status: 200,
              reason: `the MCP server answered tasks/result for task ${taskId} with no tool result (${fetched.why})`,
            };
          case 'transient':
            // Asked again after the next poll: the result stays until the task's ttl.
            task = null;
            delay = backoff();
        }
      }
      if (task?.status === 'failed' && current) {
        // A tool that answered isError fails its task: its result says why better than the
        // status does. A task failed otherwise has no result, and its status message is the reason.
        const fetched = await fetchResult(current);
        if (fetched.kind === 'result' && fetched.outcome.kind === 'response') {
          return { ...fetched.outcome, reportsFailure: true };
        }
        if (fetched.kind === 'too_large') {
          return { kind: 'too_large', status: 200, limitBytes: wait.limitBytes };
        }
        return taskFailed(task, fetched.kind === 'error' ? fetched.error.message : null);
      }
      if (task?.status === 'cancelled') return taskFailed(task, null);
      if (task?.status === 'input_required') {
        await cancel(current);
        const said = task.statusMessage ? `: ${cut(task.statusMessage)}` : '';
        return {
          kind: 'unusable',
          status: 200,
          reason: `the MCP server's task ${taskId} asks for input${said}. Gatehouse does not pass a remote server's requests for input on to agents, so it cancelled the task`,
        };
      }
      const now = Date.now();
      if (now >= stopAt) {
        await cancel(current);
        throw failure(
          UPSTREAM_TIMEOUT,
          `the MCP server's task ${taskId} had not finished when Gatehouse stopped waiting (at the task's ttl, or after ${String(MAX_TASK_WAIT_MS / 60_000)} minutes at most); Gatehouse cancelled it, but the tool may have run`,
          wait.scope,
          true,
        );
      }
      if (delay > 0) await sleep(Math.min(delay, stopAt - now), undefined, { signal: wait.signal });
      try {
        current ??= await open(false, true);
        const parsed = GetTaskResultSchema.safeParse(await ask(current, 'tasks/get'));
        if (!parsed.success || parsed.data.taskId !== taskId) {
          await cancel(current);
          const what = parsed.success
            ? `task ${parsed.data.taskId.slice(0, 100)}`
            : parsed.error.message.slice(0, 300);
          return {
            kind: 'unusable',
            status: 200,
            reason: `the MCP server answered tasks/get for task ${taskId} with no such task (${what})`,
          };
        }
        task = parsed.data;
        delay = pollDelay(task);
        faults = 0;
        refusedAgain = false;
      } catch (error) {
        wait.signal.throwIfAborted();
        if (error instanceof TokenUnavailable) lost(error.message);
        const fault: PollFault = current ? faultOf(error, current) : { kind: 'transient' };
        switch (fault.kind) {
          case 'malformed':
            await cancel(current);
            return {
              kind: 'unusable',
              status: 200,
              reason: `the MCP server answered tasks/get for task ${taskId} with ${fault.why}`,
            };
          case 'lost':
            lost(`tasks/get ${fault.why}`);
            break;
          case 'unauthorized':
            if (refusedAgain) lost('it refused a freshly refreshed token (401)');
            refusedAgain = true;
            current = await open(true, true).catch((cause: unknown) =>
              lost(`reconnecting failed: ${describe(cause)}`),
            );
            delay = 0;
            break;
          case 'no_session':
            // The server forgot the session (a restart, an expiry): a task not bound to it is
            // found from a new one; one that was is gone with it.
            if (freshSessionTried)
              lost('it no longer knows the session the task was created in (404)');
            freshSessionTried = true;
            current = await open(false, false).catch((cause: unknown) =>
              lost(`reconnecting failed: ${describe(cause)}`),
            );
            delay = 0;
            break;
          case 'transient':
            delay = backoff();
            break;
        }
      }
    }
  } finally {
    await Promise.all(opened.map((each) => each.close()));
  }
}
