import type { Db } from '../../infra/database/client.js';
import type { AuditDecision } from '../../workflows/call-types.js';
import type { AuditEvent } from './audit-events.js';
import { storableText } from './storable.js';

/**
 * One exported event: the row in full (as the audit log has it), its hash and its checkpoint on
 * the chain. seq is selected uncast: postgres.js reads a bigint as its decimal string, and a
 * `seq::text as seq` alias would be what a bare `order by seq` sorts, as text.
 */
export interface ExportedEventRow extends AuditEvent {
  seq: string;
  hash: Buffer;
  checkpointId: string | null;
}

export interface ExportFilter {
  user?: string;
  decision?: AuditDecision;
  since?: Date;
  until?: Date;
  /** The seq of the last event already exported: resume after it. */
  afterSeq?: string;
}

/** The highest seq of the environment's events visible now; null when it has none. */
export async function newestEventSeq(sql: Db, environmentId: string): Promise<string | null> {
  const [row] = await sql<{ seq: string | null }[]>`
    select max(seq) as seq from audit_events where environment_id = ${environmentId}`;
  return row?.seq ?? null;
}

/**
 * A transaction id drawn now, after a seq was seen: every transaction that could hold a lower
 * seq than it has a lower id. (A snapshot's own xmax will not do: it is one past the newest
 * *completed* transaction, so a running one may be at or above it without being listed.) It
 * costs a transaction id.
 */
export async function drawTransactionId(sql: Db): Promise<string> {
  const [row] = await sql<{ xid: string }[]>`select pg_current_xact_id()::text as xid`;
  if (!row) throw new Error('pg_current_xact_id() returned no row');
  return row.xid;
}

/**
 * Whether a transaction of this database with an id below `xid` is still running. This database
 * only: audit rows are written nowhere else, and another database on the same server (a shared
 * cluster, the tests' embedded one) must not hold an export up.
 */
export async function olderTransactionOpen(sql: Db, xid: string): Promise<boolean> {
  const [row] = await sql<{ open: boolean }[]>`
    select exists (
      select 1 from pg_stat_activity
      where datname = current_database() and backend_xid is not null
        and age(backend_xid) > age(${xid}::xid8::xid)
    ) as open`;
  return row?.open ?? false;
}

/**
 * Up to `limit` of an environment's events with seq in (afterSeq, upToSeq], oldest first (in
 * insertion order, `seq`). Each batch is its own short statement: an export holds no cursor,
 * transaction or pooled connection while its reader is slow.
 */
export async function exportAuditBatch(
  sql: Db,
  environmentId: string,
  filter: ExportFilter,
  range: { afterSeq: string | null; upToSeq: string },
  limit: number,
): Promise<ExportedEventRow[]> {
  return sql<ExportedEventRow[]>`
    select e.seq, e.id, e.environment_id, e.time, e.action, e.scope, e.decision,
      e.reason, e.agent_id, e.via, e.user_external_id, e.connected_user_id, e.connection_id,
      e.approval_id, e.request, e.response, e.trace_id, e.policy_id, e.policy_version, e.grant_id,
      e.hash, c.id as checkpoint_id
    from audit_events e
    left join lateral (
      select id, after_seq from audit_checkpoints
      where environment_id = e.environment_id and last_seq >= e.seq and superseded_at is null
      order by last_seq limit 1
    ) c on c.after_seq < e.seq
    where e.environment_id = ${environmentId} and e.seq <= ${range.upToSeq}
      ${range.afterSeq === null ? sql`` : sql`and e.seq > ${range.afterSeq}`}
      ${filter.user === undefined ? sql`` : sql`and e.user_external_id = ${storableText(filter.user)}`}
      ${filter.decision === undefined ? sql`` : sql`and e.decision = ${filter.decision}`}
      ${filter.since === undefined ? sql`` : sql`and e.time >= ${filter.since}`}
      ${filter.until === undefined ? sql`` : sql`and e.time < ${filter.until}`}
    order by e.seq limit ${limit}`;
}
