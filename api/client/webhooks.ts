import { Webhook } from 'standardwebhooks';
import type { components } from './generated/connected-users.js';

/** The approval as the events carry it: the record `GET /v1/approvals/{id}` answers. */
export type WebhookApproval = components['schemas']['Approval'];

/** One signed link per person asked; forward each to its person, never to the agent. */
export interface DecisionLink {
  approver: string;
  url: string;
  expires_at: string;
}

/** A call was held: `webhook-id` is `evt_<approval id>_requested`. */
export interface ApprovalRequestedEvent {
  type: 'approval.requested';
  timestamp: string;
  data: { approval: WebhookApproval; links: DecisionLink[] };
}

/** A held call was approved or rejected: `webhook-id` is `evt_<approval id>`. */
export interface ApprovalDecidedEvent {
  type: 'approval.decided';
  timestamp: string;
  data: { approval: WebhookApproval };
}

export type WebhookEvent = ApprovalRequestedEvent | ApprovalDecidedEvent;

/** A delivery that is not Gatehouse's: a wrong signature, an old timestamp, an unknown event. */
export class WebhookVerificationError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: HeaderSource): Record<string, string> {
  const record: Record<string, string> = {};
  const entries = headers instanceof Headers ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value !== undefined)
      record[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return record;
}

/**
 * Verifies a delivery the Standard Webhooks way (`webhook-id`, `webhook-timestamp` within five
 * minutes, `webhook-signature` over the raw body) with the endpoint's signing secret
 * (`whsec_…`), and answers the typed event. Pass the body exactly as received: parsed and
 * serialized again, it no longer matches its signature. Throws WebhookVerificationError.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderSource,
): WebhookEvent {
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody);
  let payload: unknown;
  try {
    payload = new Webhook(secret).verify(body, headerRecord(headers));
  } catch (error) {
    throw new WebhookVerificationError(
      `not a valid Gatehouse delivery: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const type = (payload as { type?: unknown } | null)?.type;
  if (type !== 'approval.requested' && type !== 'approval.decided') {
    throw new WebhookVerificationError(`unknown event type ${JSON.stringify(type)}`);
  }
  return payload as WebhookEvent;
}
