import { deliverApprovalDecidedActivity } from './deliver-approval-decided.js';
import { deliverApprovalRequestedActivity } from './deliver-approval-requested.js';
import { deliverAuditEventsActivity } from './deliver-audit-events.js';
import type { WebhookDeps } from './signed-delivery.js';

/**
 * The webhook deliveries, each retried by its workflow (workflows/webhook.ts). Every attempt
 * reads the approval and the endpoint afresh, so an endpoint fixed or removed during the retries
 * is honoured, and the event id is the `webhook-id` of every attempt.
 */
export function webhookActivities(deps: WebhookDeps) {
  return {
    deliverApprovalDecided: deliverApprovalDecidedActivity(deps),
    deliverApprovalRequested: deliverApprovalRequestedActivity(deps),
    deliverAuditEvents: deliverAuditEventsActivity(deps),
  };
}
