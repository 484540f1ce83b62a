import type { ApprovalView } from '../../workflows/call-types.js';
import type { ApprovalEvent } from '../../workflows/webhook.js';
import { approvalView, findApprovalById } from '../db/approvals.js';
import { findWebhookEndpointForDelivery } from '../db/webhook-endpoints.js';
import {
  deliverSigned,
  type DeliveryOutcome,
  type WebhookDeps,
  type WebhookPayload,
} from './signed-delivery.js';

export type ApprovalDecidedPayload = WebhookPayload<'approval.decided', { approval: ApprovalView }>;

/**
 * Delivers `approval.decided` (DESIGN.md §4). The approval and the endpoint are read at each
 * attempt, so an endpoint fixed or removed during the retries is honoured.
 */
export function deliverApprovalDecidedActivity({ sql, config, logger }: WebhookDeps) {
  return async function deliverApprovalDecided(event: ApprovalEvent): Promise<DeliveryOutcome> {
    const approval = await findApprovalById(sql, event.approvalId);
    if (!approval || approval.environmentId !== event.environmentId) return 'no_approval';
    const endpoint = await findWebhookEndpointForDelivery(
      sql,
      config.encryption,
      event.environmentId,
    );
    if (!endpoint) return 'no_endpoint';
    const payload: ApprovalDecidedPayload = {
      type: 'approval.decided',
      timestamp: (approval.decidedAt ?? new Date()).toISOString(),
      data: { approval: approvalView(approval) },
    };
    return deliverSigned(
      { config, logger },
      endpoint,
      { type: payload.type, eventId: event.eventId, approvalId: approval.id },
      payload,
    );
  };
}
