import type { ApprovalEvent } from '../../workflows/webhook-types.js';
import { decisionLinks, type DecisionLink } from '../approvals/decision-links.js';
import { withPolicyInForce, type PresentedApproval } from '../approvals/policy-in-force.js';
import { approvalView } from '../db/approvals.js';
import { approvalDelivery } from './approval-delivery.js';
import {
  deliverSigned,
  type DeliveryOutcome,
  type WebhookDeps,
  type WebhookPayload,
} from './signed-delivery.js';

export type ApprovalRequestedPayload = WebhookPayload<
  'approval.requested',
  { approval: PresentedApproval; links: DecisionLink[] }
>;

/**
 * Delivers `approval.requested` with one signed decision link per decider the
 * policy asked (one generic link when it asked none), so an integration only forwards links.
 * The links are made here, at each attempt, and come out the same every time (their tokens are
 * derived): no token is ever in the workflow's input, result or failure.
 */
export function deliverApprovalRequestedActivity({ sql, config, logger }: WebhookDeps) {
  return async function deliverApprovalRequested(event: ApprovalEvent): Promise<DeliveryOutcome> {
    const target = await approvalDelivery({ sql, config }, event);
    if (typeof target === 'string') return target;
    const { approval, endpoint } = target;
    const payload: ApprovalRequestedPayload = {
      type: 'approval.requested',
      timestamp: approval.createdAt.toISOString(),
      data: {
        approval: await withPolicyInForce(sql, approval, approvalView(approval)),
        // Made for this endpoint: the key that set it chose where they go (link-provenance.ts).
        links: await decisionLinks(sql, config, approval, {
          channel: 'webhook',
          keyAgentId: endpoint.keyAgentId,
        }),
      },
    };
    return deliverSigned(
      { config, logger },
      endpoint,
      { type: payload.type, eventId: event.eventId, approvalId: approval.id },
      payload,
    );
  };
}
