import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Sql } from '../../infra/database/client.js';
import { cancelSignal } from '../../workflows/call-messages.js';
import type { ApprovalStatus } from '../../workflows/call-types.js';
import type { NexusTicket } from '../../workflows/nexus/run-action-types.js';
import { findApprovalById, settleApproval } from '../db/approvals.js';
import { insertAuditEvents } from '../db/audit-events.js';

/**
 * The caller cancelled its `runAction` operation before the call ran. The approval
 * is settled `cancelled` in Postgres first, in the one statement that also settles decisions
 * (`where status = 'pending'`): from then on an approve is 409, whoever sends it. Then the call
 * workflow is told (the `cancel` signal a user's deletion sends), and ends without running the
 * call, even if it was approved a moment before. The audit log gets a `denied` row naming the
 * approval and the cancellation. Safe to run twice: the row's id is the workflow's ticket.
 */
export function cancelNexusCallActivity(deps: { sql: Sql; temporal: Client }) {
  return async function cancelNexusCall(
    approvalId: string,
    ticket: NexusTicket,
  ): Promise<ApprovalStatus> {
    const found = await findApprovalById(deps.sql, approvalId);
    if (!found) throw new Error(`approval ${approvalId} not found`);
    const approval = (await settleApproval(deps.sql, approvalId, 'cancelled', null)) ?? found;
    try {
      await deps.temporal.workflow
        .getHandle(approval.workflowId)
        .signal(cancelSignal, 'nexus operation cancelled');
    } catch (error) {
      // A call workflow that has ended (its approval expired or used) needs no telling.
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    await insertAuditEvents(deps.sql, [
      {
        id: ticket.requestId,
        environmentId: approval.environmentId,
        action: approval.action,
        scope: approval.scope,
        decision: 'denied',
        reason:
          `cancelled: the caller cancelled its Nexus operation while approval ${approval.id} ` +
          `was ${found.status}; the call did not run`,
        agentId: approval.agentId,
        via: 'api',
        userExternalId: approval.userExternalId,
        connectedUserId: null,
        connectionId: null,
        approvalId: approval.id,
        request: approval.request,
        response: null,
        traceId: ticket.traceId,
        policyId: approval.policyId,
        policyVersion: approval.policyVersion,
      },
    ]);
    return approval.status;
  };
}
