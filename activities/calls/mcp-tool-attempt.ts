/**
 * One attempt of the upstream step of a call to a remote MCP tool, as Temporal runs it: what
 * the attempt before it recorded, and the heartbeats that record what this one does. A tool the
 * server runs as a task (MCP tasks) may take longer than any one worker lives, so the task's id
 * is recorded in the heartbeat details the moment the server creates it: a later attempt then
 * polls that task instead of calling the tool again.
 */
import type { Context } from '@temporalio/activity';

/** What a remote MCP task is known by, recorded as soon as the server created it. */
export interface RemoteTaskRecord {
  taskId: string;
  /** The MCP session it was created in (a server may bind a task to it); null: none. */
  sessionId: string | null;
  /** What the session negotiated, sent again with its requests; null: unknown. */
  protocolVersion: string | null;
  /** When Gatehouse stops waiting for it (epoch ms), whichever attempt is polling then. */
  until: number;
}

/**
 * An attempt's heartbeat details. Defined from the first beat, so that the details a later
 * timeout carries say an attempt ran; `task` from the moment the server created one.
 */
export type ToolCallProgress = { step: 'calling' } | { step: 'task'; task: RemoteTaskRecord };

/** A task id or session id longer than this is not kept in Temporal (nor believed). */
export const MAX_REMOTE_ID_LENGTH = 512;

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_REMOTE_ID_LENGTH;
}

/** Heartbeat details as an earlier attempt wrote them; null for anything else. */
export function progressOf(details: unknown): ToolCallProgress | null {
  if (typeof details !== 'object' || details === null) return null;
  const { step, task } = details as { step?: unknown; task?: unknown };
  if (step === 'calling') return { step };
  if (step !== 'task' || typeof task !== 'object' || task === null) return null;
  const { taskId, sessionId, protocolVersion, until } = task as Record<string, unknown>;
  if (!isId(taskId) || typeof until !== 'number' || !Number.isFinite(until)) return null;
  if (sessionId !== null && !isId(sessionId)) return null;
  if (protocolVersion !== null && !isId(protocolVersion)) return null;
  return { step, task: { taskId, sessionId, protocolVersion, until } };
}

export interface ToolAttempt {
  /** 1 for the first. */
  number: number;
  /**
   * A regular activity's attempt: it heartbeats, and Temporal starts another when its worker is
   * lost. A local activity's (a read) is neither: a read may be sent again.
   */
  durable: boolean;
  /**
   * What the attempts before this one recorded: null on a first attempt; `calling` when they
   * recorded no task (or nothing Temporal kept), which proves nothing about the call.
   */
  earlier: ToolCallProgress | null;
  /** When Temporal gives up on this attempt (epoch ms). */
  endsAt: number;
  /** The server created this task: every heartbeat carries it from now on. */
  record(task: RemoteTaskRecord): void;
  /** Stops the heartbeats once the attempt's outcome is read. */
  stop(): void;
}

/** Well inside the heartbeat timeout of the write activity (workflows/call.ts). */
const HEARTBEAT_EVERY_MS = 1_000;

/** The running activity's attempt; a regular activity starts heartbeating at once. */
export function toolAttempt(context: Context): ToolAttempt {
  const { info } = context;
  const startedAt = Date.now();
  const bounds = [startedAt + info.startToCloseTimeoutMs];
  if (info.scheduleToCloseTimeoutMs > 0) {
    bounds.push(info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs);
  }
  const durable = !info.isLocal;
  const earlier =
    info.attempt > 1 ? (progressOf(info.heartbeatDetails) ?? { step: 'calling' }) : null;
  // A resumed task stays recorded for the attempt after this one.
  let details: ToolCallProgress = earlier?.step === 'task' ? earlier : { step: 'calling' };
  const beat = () => {
    context.heartbeat(details);
  };
  if (durable) beat();
  const timer = durable ? setInterval(beat, HEARTBEAT_EVERY_MS) : undefined;
  return {
    number: info.attempt,
    durable,
    earlier,
    endsAt: Math.min(...bounds),
    record(task) {
      details = { step: 'task', task };
      if (durable) beat();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** An attempt outside Temporal's activities (a test calling the step directly): no heartbeats. */
export function unrecordedAttempt(endsAt: number): ToolAttempt {
  return {
    number: 1,
    durable: false,
    earlier: null,
    endsAt,
    record: () => undefined,
    stop: () => undefined,
  };
}
