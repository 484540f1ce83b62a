import type { Db } from '../../infra/database/client.js';
import type { AuditDecision } from '../../workflows/call-types.js';
import type { AuditEvent } from './audit-events.js';
import { storableText } from './storable.js';

/** One exported event: the row in full (as the audit log has it), its hash and its checkpoint. */
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

/**
 * An environment's events oldest first (in insertion order, `seq`), read through a Postgres cursor
 * `batch` rows at a time, so memory holds one batch whatever the export's length.
 */
export function exportAuditEvents(
  sql: Db,
  environmentId: string,
  filter: ExportFilter,
  batch: number,
): AsyncIterable<ExportedEventRow[]> {
  return sql<ExportedEventRow[]>`
    select e.seq::text as seq, e.id, e.environment_id, e.time, e.action, e.scope, e.decision,
      e.reason, e.agent_id, e.via, e.user_external_id, e.connected_user_id, e.connection_id,
      e.approval_id, e.request, e.response, e.trace_id, e.policy_id, e.policy_version, e.grant_id,
      e.hash, c.id as checkpoint_id
    from audit_events e
    left join lateral (
      select id, after_seq from audit_checkpoints
      where environment_id = e.environment_id and last_seq >= e.seq
      order by last_seq limit 1
    ) c on c.after_seq < e.seq
    where e.environment_id = ${environmentId}
      ${filter.afterSeq === undefined ? sql`` : sql`and e.seq > ${filter.afterSeq}`}
      ${filter.user === undefined ? sql`` : sql`and e.user_external_id = ${storableText(filter.user)}`}
      ${filter.decision === undefined ? sql`` : sql`and e.decision = ${filter.decision}`}
      ${filter.since === undefined ? sql`` : sql`and e.time >= ${filter.since}`}
      ${filter.until === undefined ? sql`` : sql`and e.time < ${filter.until}`}
    order by e.seq`.cursor(batch);
}
