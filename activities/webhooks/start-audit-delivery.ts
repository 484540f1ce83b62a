import type { Client } from '@temporalio/client';
import { auditEventWorkflowId, type AuditEventDelivery } from '../../workflows/webhook-types.js';

/**
 * Makes sure the environment's `audit.event` delivery workflow runs: started when an endpoint
 * turns audit delivery on, and again for every such endpoint when a worker starts (a workflow an
 * operator terminated comes back). One per environment: a running one is left as it is.
 */
export async function ensureAuditEventDelivery(
  temporal: Client,
  taskQueue: string,
  input: AuditEventDelivery,
): Promise<void> {
  await temporal.workflow.start('auditEventWebhook', {
    taskQueue,
    workflowId: auditEventWorkflowId(input.environmentId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
  });
}
