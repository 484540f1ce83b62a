import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ApprovalEvent } from './webhook-types.js';

// Temporal's retries are the delivery guarantee: backoff up to an hour apart, for 24 hours.
const { deliverApprovalDecided, deliverApprovalRequested } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/**
 * Delivers `approval.decided`. A workflow of its own, started by the call
 * workflow and left running when that one ends, so a receiver that is down for hours still gets
 * the event without holding the call open.
 */
export async function approvalDecidedWebhook(event: ApprovalEvent): Promise<string> {
  return deliverApprovalDecided(event);
}

/**
 * Delivers `approval.requested` with the approval's decision links, the same way: started by
 * the call workflow when it holds a call, and outliving it if need be.
 */
export async function approvalRequestedWebhook(event: ApprovalEvent): Promise<string> {
  return deliverApprovalRequested(event);
}
