import type { Writable } from 'node:stream';
import type { Db } from '../../infra/database/client.js';
import type { AuditDecision } from '../../workflows/call-types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  exportAuditBatch,
  drawTransactionId,
  newestEventSeq,
  olderTransactionOpen,
  type ExportedEventRow,
  type ExportFilter,
} from '../db/audit-export.js';

/** Rows read per statement, and written per chunk. */
export const EXPORT_BATCH = 1000;

/** The filters as the API's query and the CLI's options spell them, already validated. */
export interface ExportFilterText {
  user?: string | undefined;
  decision?: AuditDecision | undefined;
  /** ISO times. */
  since?: string | undefined;
  until?: string | undefined;
  /** The `cursor` of the last line already exported. */
  cursor?: string | undefined;
}

export function exportFilter(text: ExportFilterText): ExportFilter {
  return {
    ...(text.user === undefined ? {} : { user: text.user }),
    ...(text.decision === undefined ? {} : { decision: text.decision }),
    ...(text.since === undefined ? {} : { since: new Date(text.since) }),
    ...(text.until === undefined ? {} : { until: new Date(text.until) }),
    ...(text.cursor === undefined ? {} : { afterSeq: text.cursor }),
  };
}

/**
 * One exported event (README "Export the audit trail"): flat, `time` and `event_id` first. An
 * export line and each event of an `audit.event` webhook batch.
 */
export function exportRecord(row: ExportedEventRow) {
  return {
    time: row.time.toISOString(),
    event_id: row.id,
    cursor: row.seq,
    source: 'gatehouse',
    type: 'audit.event',
    environment_id: row.environmentId,
    action: row.action,
    scope: row.scope,
    decision: row.decision,
    reason: row.reason,
    agent_id: row.agentId,
    user: row.userExternalId,
    via: row.via,
    connected_user_id: row.connectedUserId,
    connection_id: row.connectionId,
    approval_id: row.approvalId,
    grant_id: row.grantId,
    policy: row.policyId === null ? null : { id: row.policyId, version: row.policyVersion },
    trace_id: row.traceId,
    request: row.request,
    response: row.response,
    hash: row.hash.toString('hex'),
    checkpoint_id: row.checkpointId,
  };
}

export type ExportRecord = ReturnType<typeof exportRecord>;

/** One NDJSON line of an export. */
export function exportLine(row: ExportedEventRow): string {
  return `${JSON.stringify(exportRecord(row))}\n`;
}

/**
 * Writes with backpressure: waits for 'drain' when the stream's buffer is full. Resolves false
 * once the stream is destroyed (a client gone, a file that failed): 'close' follows either.
 */
async function write(out: Writable, chunk: string): Promise<boolean> {
  if (!out.write(chunk)) {
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
    });
  }
  return !out.destroyed;
}

/** How long an export waits for the transactions open when it starts to end. */
export const EXPORT_SETTLE_WAIT_MS = 5000;

/**
 * Where an export stops: the newest seq visible when it starts, once every transaction that was
 * open then has ended. seq is drawn at insert, so a transaction still open may hold a lower seq
 * than rows already visible; an export (or a resume by cursor) past them would never show its
 * row. Every writer has its transaction id before it draws a seq (migration 023), so waiting for
 * the transactions older than one drawn now covers every lower seq. null when one is still open after
 * `waitMs` (another program's long transaction on a shared database).
 */
export async function exportHorizon(
  sql: Db,
  environmentId: string,
  waitMs: number = EXPORT_SETTLE_WAIT_MS,
  /** Where the reader already is: with nothing newer, there is nothing to wait for. */
  afterSeq: string | null = null,
): Promise<{ upToSeq: string | null } | null> {
  const lastSeq = await newestEventSeq(sql, environmentId);
  if (lastSeq === null) return { upToSeq: null };
  if (afterSeq !== null && BigInt(lastSeq) <= BigInt(afterSeq)) return { upToSeq: lastSeq };
  const xid = await drawTransactionId(sql);
  const giveUpAt = Date.now() + waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    if (!(await olderTransactionOpen(sql, xid))) return { upToSeq: lastSeq };
    if (Date.now() >= giveUpAt) return null;
    await sleep(pause);
  }
}

/** How an export ended: the lines handed to the stream, and whether every one was. */
export interface ExportWritten {
  lines: number;
  complete: boolean;
}

/**
 * Streams an environment's events up to `upToSeq` (from `exportHorizon`) as NDJSON into `out`
 * (an HTTP response, a file) without ending it: the one path behind `GET /v1/audit/export` and
 * `gatehouse audit export`, so their lines are the same bytes. Memory holds one batch, since a
 * full stream stops the reading, and no database resource is held while it waits.
 */
export async function writeAuditExport(
  sql: Db,
  environmentId: string,
  filter: ExportFilter,
  upToSeq: string | null,
  out: Writable,
): Promise<ExportWritten> {
  let lines = 0;
  let afterSeq = filter.afterSeq ?? null;
  while (upToSeq !== null) {
    const range = { afterSeq, upToSeq };
    const rows = await exportAuditBatch(sql, environmentId, filter, range, EXPORT_BATCH);
    if (rows.length === 0) break;
    // One write per batch: a line per write would cost a syscall per event.
    if (!(await write(out, rows.map(exportLine).join('')))) return { lines, complete: false };
    lines += rows.length;
    afterSeq = rows.at(-1)?.seq ?? null;
    if (rows.length < EXPORT_BATCH) break;
  }
  return { lines, complete: true };
}
