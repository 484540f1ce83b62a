import type { ApprovalEvent } from '../../workflows/webhook-types.js';
import { withPolicyInForce, type PresentedApproval } from '../approvals/policy-in-force.js';
import { approvalView } from '../db/approvals.js';
import { findGrantOfApproval, grantView } from '../db/grants.js';
import type { GrantView } from '../../workflows/grant-types.js';
import { approvalDelivery } from './approval-delivery.js';
import {
  deliverSigned,
  type DeliveryOutcome,
  type WebhookDeps,
  type WebhookPayload,
} from './signed-delivery.js';

export type ApprovalDecidedPayload = WebhookPayload<
  'approval.decided',
  // `grant`: the grant the approval made, present only when it made one.
  { approval: PresentedApproval & { grant?: GrantView } }
>;

/**
 * Delivers `approval.decided`, signed the Standard Webhooks way. The approval and the endpoint are
 * read at each attempt, so an endpoint fixed or removed during the retries is honoured.
 */
export function deliverApprovalDecidedActivity({ sql, config, logger }: WebhookDeps) {
  return async function deliverApprovalDecided(event: ApprovalEvent): Promise<DeliveryOutcome> {
    const target = await approvalDelivery({ sql, config }, event);
    if (typeof target === 'string') return target;
    const { approval, endpoint } = target;
    const [presented, grant] = await Promise.all([
      withPolicyInForce(sql, approval, approvalView(approval)),
      findGrantOfApproval(sql, approval.id),
    ]);
    const payload: ApprovalDecidedPayload = {
      type: 'approval.decided',
      timestamp: (approval.decidedAt ?? new Date()).toISOString(),
      data: { approval: { ...presented, ...(grant ? { grant: grantView(grant) } : {}) } },
    };
    return deliverSigned(
      { config, logger },
      endpoint,
      { type: payload.type, eventId: event.eventId, approvalId: approval.id },
      payload,
    );
  };
}
