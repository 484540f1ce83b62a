import type { Db } from '../../infra/database/client.js';
import type { CallTicket } from '../../workflows/call-types.js';

/**
 * The audit row of a request that waited for a held call's decision beside another request of
 * the same call and got that request's answer: the app was called once, for the
 * other one, and this row says so. Copied from that row in one statement, so both rows always
 * agree; nothing when that row does not exist (the other request was not answered by a run).
 */
export async function recordJoinedAudit(
  sql: Db,
  ticket: CallTicket,
  answeredRequestId: string,
): Promise<void> {
  await sql`
    insert into audit_events (
      id, environment_id, time, action, scope, decision, reason, agent_id, via, user_external_id,
      connected_user_id, connection_id, approval_id, request, response, trace_id, policy_id,
      policy_version, grant_id)
    select ${ticket.requestId}, environment_id, now(), action, scope, decision,
           'waited with request ' || id || ' for its approval, and got its answer: ' || coalesce(reason, ''),
           agent_id, via, user_external_id, connected_user_id, connection_id, approval_id, request,
           response, ${ticket.traceId}, policy_id, policy_version, grant_id
    from audit_events where id = ${answeredRequestId}
    on conflict (id) do nothing`;
}
