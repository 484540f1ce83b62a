import { v7 as uuidv7 } from 'uuid';
import type postgres from 'postgres';
import type { Db } from '../../infra/database/client.js';
import type { AuditDecision } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';

/** One row of the audit log. Written once, never updated or deleted by the API. */
export interface AuditEvent {
  id: string;
  environmentId: string;
  time: Date;
  action: string;
  scope: CallScope;
  decision: AuditDecision;
  reason: string | null;
  agentId: string;
  via: string;
  userExternalId: string;
  connectedUserId: string | null;
  connectionId: string | null;
  approvalId: string | null;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
  traceId: string;
  policyId: string | null;
  policyVersion: number | null;
}

/** `id` may be given (a workflow's deterministic one); a row with that id is not written twice. */
export type NewAuditEvent = Omit<AuditEvent, 'id' | 'time'> & { id?: string };

const columns = (sql: Db) => sql`
  id, environment_id, time, action, scope, decision, reason, agent_id, via, user_external_id,
  connected_user_id, connection_id, approval_id, request, response, trace_id, policy_id,
  policy_version`;

const json = (sql: Db, value: Record<string, unknown> | null) =>
  value === null ? null : sql.json(value as postgres.JSONValue);

/** Writes the events of one step of a call (one per caller) in a single statement. */
export async function insertAuditEvents(sql: Db, events: NewAuditEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((event) => ({
    id: event.id ?? uuidv7(),
    environment_id: event.environmentId,
    action: event.action,
    scope: event.scope,
    decision: event.decision,
    reason: event.reason,
    agent_id: event.agentId,
    via: event.via,
    user_external_id: event.userExternalId,
    connected_user_id: event.connectedUserId,
    connection_id: event.connectionId,
    approval_id: event.approvalId,
    request: json(sql, event.request),
    response: json(sql, event.response),
    trace_id: event.traceId,
    policy_id: event.policyId,
    policy_version: event.policyVersion,
  }));
  await sql`insert into audit_events ${sql(rows)} on conflict (id) do nothing`;
  return rows.map((row) => row.id);
}

export interface AuditFilter {
  user?: string;
  decision?: AuditDecision;
  /** Id of the last event of the previous page (ids are UUIDv7, so time-ordered). */
  before?: string;
  limit: number;
}

/** Newest first. Asks for one more row than the page so the caller knows whether more follow. */
export async function listAuditEvents(
  sql: Db,
  environmentId: string,
  filter: AuditFilter,
): Promise<AuditEvent[]> {
  return sql<AuditEvent[]>`
    select ${columns(sql)} from audit_events
    where environment_id = ${environmentId}
      ${filter.user === undefined ? sql`` : sql`and user_external_id = ${filter.user}`}
      ${filter.decision === undefined ? sql`` : sql`and decision = ${filter.decision}`}
      ${filter.before === undefined ? sql`` : sql`and id < ${filter.before}`}
    order by id desc
    limit ${filter.limit + 1}`;
}

export async function findAuditEvent(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<AuditEvent | null> {
  const [row]: [AuditEvent?] = await sql`
    select ${columns(sql)} from audit_events where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}
