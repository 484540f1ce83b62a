import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

/** An `approval.decided` event to deliver; the payload is read from Postgres at delivery time. */
export interface ApprovalDecidedEvent {
  environmentId: string;
  approvalId: string;
  /** Stable across retries (`webhook-id`), so receivers can de-duplicate. */
  eventId: string;
}

// Temporal's retries are the delivery guarantee: backoff up to an hour apart, for 24 hours.
const { deliverApprovalDecided } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/**
 * Delivers `approval.decided` (DESIGN.md §4). A workflow of its own, started by the call
 * workflow and left running when that one ends, so a receiver that is down for hours still gets
 * the event without holding the call open.
 */
export async function approvalDecidedWebhook(event: ApprovalDecidedEvent): Promise<string> {
  return deliverApprovalDecided(event);
}
