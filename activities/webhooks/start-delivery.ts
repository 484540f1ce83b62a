import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Sql } from '../../infra/database/client.js';
import type { ApprovalEvent } from '../../workflows/webhook-types.js';
import { hasWebhookEndpoint } from '../db/webhook-endpoints.js';

/**
 * Starts the workflow that delivers an approval event, on the caller's task queue, when the
 * environment has a webhook endpoint (an environment without one has no delivery
 * workflows cluttering the Temporal UI's list; an endpoint set later hears of later events). A
 * local activity of the call workflow: started as a child, the delivery cost the
 * approved call a failed workflow task and a whole replay before its retry could run. Started
 * again (a retried attempt, a replay), it finds the delivery already there, as its id is the
 * event's.
 */
export function startApprovalDeliveryActivity({ temporal, sql }: { temporal: Client; sql: Sql }) {
  return async (
    kind: 'approval.decided' | 'approval.requested',
    event: ApprovalEvent,
  ): Promise<void> => {
    if (!(await hasWebhookEndpoint(sql, event.environmentId))) return;
    const workflowType =
      kind === 'approval.decided' ? 'approvalDecidedWebhook' : 'approvalRequestedWebhook';
    try {
      await temporal.workflow.start(workflowType, {
        taskQueue: Context.current().info.taskQueue,
        workflowId: `webhook/${kind}/${event.approvalId}`,
        args: [event],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  };
}
