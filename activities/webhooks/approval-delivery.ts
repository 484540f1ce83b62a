import type { ApprovalEvent } from '../../workflows/webhook-types.js';
import { findApprovalById, type Approval } from '../db/approvals.js';
import { findWebhookEndpointForDelivery, type WebhookEndpoint } from '../db/webhook-endpoints.js';
import type { WebhookDeps } from './signed-delivery.js';

/**
 * What an approval event is delivered about, and where, read afresh at each attempt: an endpoint
 * fixed or removed during the retries is honoured, and the payload shows the approval as it is.
 */
export async function approvalDelivery(
  { sql, config }: Pick<WebhookDeps, 'sql' | 'config'>,
  event: ApprovalEvent,
): Promise<{ approval: Approval; endpoint: WebhookEndpoint } | 'no_approval' | 'no_endpoint'> {
  const approval = await findApprovalById(sql, event.approvalId);
  if (!approval || approval.environmentId !== event.environmentId) return 'no_approval';
  const endpoint = await findWebhookEndpointForDelivery(
    sql,
    config.encryption,
    event.environmentId,
  );
  return endpoint ? { approval, endpoint } : 'no_endpoint';
}
