import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import type { AuditDecision } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { AnswerToKeep } from './call-idempotency-keys.js';
import { IDEMPOTENCY_RETENTION_SECONDS } from './idempotency-keys.js';
import { storableJson, storableText } from './storable.js';

/** One row of the audit log. Written once, never updated or deleted by the API. */
export interface AuditEvent {
  id: string;
  environmentId: string;
  time: Date;
  /** As asked, for a refused call naming no catalog action. */
  action: string;
  /** null only for a refused call whose action is unknown. */
  scope: CallScope | null;
  decision: AuditDecision;
  reason: string | null;
  agentId: string;
  via: string;
  /** null only for a refused call that named no valid user. */
  userExternalId: string | null;
  connectedUserId: string | null;
  connectionId: string | null;
  approvalId: string | null;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
  traceId: string;
  policyId: string | null;
  policyVersion: number | null;
  /** The grant that let the call run without asking. */
  grantId: string | null;
}

/**
 * `id` may be given (a workflow's deterministic one); a row with that id is not written twice.
 * `workflowRunId`: the call workflow run that answered the request, when a workflow writes it.
 */
export type NewAuditEvent = Omit<AuditEvent, 'id' | 'time' | 'grantId'> & {
  id?: string;
  grantId?: string | null;
  workflowRunId?: string | null;
};

const columns = (sql: Db) => sql`
  id, environment_id, time, action, scope, decision, reason, agent_id, via, user_external_id,
  connected_user_id, connection_id, approval_id, request, response, trace_id, policy_id,
  policy_version, grant_id`;

const text = (value: string | null) => (value === null ? null : storableText(value));

/**
 * Writes the events of one step of a call (one per caller) in a single statement. Every string
 * is written in its storable form (./storable.ts): whatever a caller or an app sent, the row is
 * written, because a call that ran must never lose its row over what it carried.
 */
export async function insertAuditEvents(sql: Db, events: NewAuditEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = auditRows(sql, events);
  await sql`insert into audit_events ${sql(rows)} on conflict (id) do nothing`;
  return rows.map((row) => row.id);
}

/**
 * Writes the rows of one step of a call workflow run, in one statement. A row that is
 * already there is written over when this run wrote it (the step ran again, after Temporal
 * discarded the workflow task it ran in: the answer given is the later one's) or when its id is
 * in `replacing`; any other is left. Returns the rows left that another run, or the API, wrote.
 *
 * `keep`: the call's final answer, kept under its Idempotency-Key in the same
 * statement, naming a row this statement wrote, so a key's answer is never kept without the row
 * its replays copy, nor a row written without the answer a retry must get. The first answer kept
 * for a key stays.
 */
export async function writeRunAuditEvents(
  sql: Db,
  events: NewAuditEvent[],
  workflowRunId: string,
  options: { replacing?: readonly string[]; keep?: AnswerToKeep } = {},
): Promise<Map<string, string | null>> {
  if (events.length === 0) return new Map();
  const replacing = [...(options.replacing ?? [])];
  const rows = auditRows(sql, events).map((row) => ({ ...row, workflow_run_id: workflowRunId }));
  const { keep } = options;
  const kept = keep
    ? sql`, kept as (
        insert into call_idempotency_keys (environment_id, agent_id, key, fingerprint, answer,
          decision, audit_event_id, answered_at, expires_at)
        select ${keep.environmentId}, ${keep.agentId}, ${keep.key}, ${keep.fingerprint},
          ${keep.sealedAnswer}, ${keep.decision}, mine.id, now(),
          now() + make_interval(secs => ${IDEMPOTENCY_RETENTION_SECONDS})
        from (select id from written limit 1) as mine
        on conflict (environment_id, agent_id, key) do update
          set answer = excluded.answer, decision = excluded.decision,
              audit_event_id = excluded.audit_event_id, answered_at = now(),
              expires_at = excluded.expires_at
          where call_idempotency_keys.fingerprint = excluded.fingerprint
            and call_idempotency_keys.answer is null
      )`
    : sql``;
  // `earlier` reads the table as it was before this statement; the writes run all the same.
  const earlier = await sql<{ id: string; workflowRunId: string | null }[]>`
    with earlier as (
      select id, workflow_run_id from audit_events
      where id = any(${rows.map((row) => row.id)}::uuid[])
    ), written as (
      insert into audit_events ${sql(rows)}
      on conflict (id) do update set
        -- excluded holds the row as the hash trigger saw it (time is its default, now()): the
        -- hash is over the row as finally written.
        time = excluded.time, hash = excluded.hash, action = excluded.action, scope = excluded.scope,
        decision = excluded.decision, reason = excluded.reason, agent_id = excluded.agent_id,
        via = excluded.via, user_external_id = excluded.user_external_id,
        connected_user_id = excluded.connected_user_id, connection_id = excluded.connection_id,
        approval_id = excluded.approval_id, request = excluded.request,
        response = excluded.response, trace_id = excluded.trace_id,
        policy_id = excluded.policy_id, policy_version = excluded.policy_version,
        grant_id = excluded.grant_id, workflow_run_id = excluded.workflow_run_id
      where audit_events.environment_id = excluded.environment_id
        -- A sealed row is never written over: the checkpoint is the record.
        and audit_events.seq > coalesce((select max(last_seq) from audit_checkpoints
          where environment_id = excluded.environment_id), 0)
        and (audit_events.workflow_run_id = excluded.workflow_run_id
          or audit_events.id = any(${replacing}::uuid[]))
      returning id
    )${kept}
    select id, workflow_run_id from earlier
    where workflow_run_id is distinct from ${workflowRunId}
      and id <> all(${replacing}::uuid[])`;
  return new Map(earlier.map((row) => [row.id, row.workflowRunId]));
}

function auditRows(sql: Db, events: NewAuditEvent[]) {
  return events.map((event) => ({
    id: event.id ?? uuidv7(),
    environment_id: event.environmentId,
    action: storableText(event.action),
    scope: event.scope,
    decision: event.decision,
    reason: text(event.reason),
    agent_id: storableText(event.agentId),
    via: storableText(event.via),
    user_external_id: text(event.userExternalId),
    connected_user_id: event.connectedUserId,
    connection_id: event.connectionId,
    approval_id: event.approvalId,
    request: storableJson(sql, event.request),
    response: event.response === null ? null : storableJson(sql, event.response),
    trace_id: storableText(event.traceId),
    policy_id: event.policyId,
    policy_version: event.policyVersion,
    grant_id: event.grantId ?? null,
    workflow_run_id: event.workflowRunId ?? null,
  }));
}

export interface AuditFilter {
  user?: string;
  decision?: AuditDecision;
  /** The console's filters; the API's list takes user and decision only. */
  agent?: string;
  action?: string;
  /** Events at or after this time. */
  since?: Date;
  /** Events before this time. */
  until?: Date;
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
      ${filter.user === undefined ? sql`` : sql`and user_external_id = ${storableText(filter.user)}`}
      ${filter.decision === undefined ? sql`` : sql`and decision = ${filter.decision}`}
      ${filter.agent === undefined ? sql`` : sql`and agent_id = ${storableText(filter.agent)}`}
      ${filter.action === undefined ? sql`` : sql`and action = ${storableText(filter.action)}`}
      ${filter.since === undefined ? sql`` : sql`and time >= ${filter.since}`}
      ${filter.until === undefined ? sql`` : sql`and time < ${filter.until}`}
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

/**
 * The call workflow run that wrote the event, when a workflow wrote it (null for what the API
 * refused before any workflow ran, and for changes made in the console).
 */
export async function auditEventWorkflowRun(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<string | null> {
  const [row]: [{ workflowRunId: string | null }?] = await sql`
    select workflow_run_id from audit_events where environment_id = ${environmentId} and id = ${id}`;
  return row?.workflowRunId ?? null;
}
