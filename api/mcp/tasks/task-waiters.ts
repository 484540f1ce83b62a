import { performance } from 'node:perf_hooks';
import { MCP_TASK_SETTLED_CHANNEL } from '../../../activities/db/mcp-tasks.js';
import type { Sql } from '../../../infra/database/client.js';

/** One waiting `tasks/result`: woken when its task may have ended. */
export interface TaskWatch {
  /** When the watch began (performance.now()): reads from before it may miss the end. */
  since: number;
  /** Settles when the task may have ended, at `untilMs`, or when `signal` aborts. Never rejects. */
  changed: Promise<void>;
  stop(): void;
}

/**
 * This process's waiting `tasks/result` requests, woken by Postgres: a task's end is written
 * with a NOTIFY on MCP_TASK_SETTLED_CHANNEL (activities/db/mcp-tasks.ts), which one LISTEN
 * connection hears for the whole process. A waiting request costs a map entry and a timer, and
 * nothing in Temporal or Postgres: a thousand of them poll nothing. When the LISTEN connection
 * is (re)established every watch is woken, since an end may have been missed meanwhile; the
 * request reads its task again either way, so a wake-up is only ever a prompt to look.
 */
export class TaskWaiters {
  private readonly watching = new Map<string, Set<() => void>>();
  private readonly reading = new Map<string, { startedAt: number; promise: Promise<unknown> }>();
  private listening: Promise<unknown> | null = null;

  constructor(private readonly sql: Sql) {}

  /** How many requests wait now (the benchmark reads it). */
  get size(): number {
    let count = 0;
    for (const wakes of this.watching.values()) count += wakes.size;
    return count;
  }

  /**
   * Starts watching before the caller reads the task, so an end written between the read and the
   * wait is not missed.
   */
  watch(taskId: string, untilMs: number, signal: AbortSignal): TaskWatch {
    this.listen();
    const since = performance.now();
    let wake: () => void = () => undefined;
    const changed = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const timer = setTimeout(wake, Math.max(0, untilMs - Date.now()));
    const stop = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      const wakes = this.watching.get(taskId);
      wakes?.delete(wake);
      if (wakes?.size === 0) this.watching.delete(taskId);
      wake();
    };
    signal.addEventListener('abort', stop, { once: true });
    let wakes = this.watching.get(taskId);
    if (!wakes) {
      wakes = new Set();
      this.watching.set(taskId, wakes);
    }
    wakes.add(wake);
    return { since, changed: changed.finally(stop), stop };
  }

  /**
   * One read for the requests that ask for the same `key` while it is in flight: a task's end
   * wakes all its waiting requests at once, and they need one row read, not a thousand. A read
   * that started before `since` (when the asking request began to watch) is not joined: it may
   * have read the task before the end the request must not miss.
   */
  readOnce<T>(key: string, since: number, read: () => Promise<T>): Promise<T> {
    const inFlight = this.reading.get(key);
    if (inFlight && inFlight.startedAt >= since) return inFlight.promise as Promise<T>;
    const started = { startedAt: performance.now(), promise: read() };
    this.reading.set(key, started);
    void started.promise
      .finally(() => {
        if (this.reading.get(key) === started) this.reading.delete(key);
      })
      .catch(() => undefined);
    return started.promise;
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = this.sql
      .listen(
        MCP_TASK_SETTLED_CHANNEL,
        (taskId) => {
          for (const wake of this.watching.get(taskId) ?? []) wake();
        },
        () => {
          this.wakeAll();
        },
      )
      .catch(() => {
        // Not listening: the watches end at their bound and read again; the next watch retries.
        this.listening = null;
      });
  }

  private wakeAll(): void {
    for (const wakes of this.watching.values()) for (const wake of wakes) wake();
  }
}
