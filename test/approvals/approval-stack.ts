import { expect } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { DecisionLink } from '../../activities/approvals/decision-links.js';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startOrUndo } from '../support/stops.js';
import {
  deliveriesOf,
  startReceiver,
  type Delivery,
  type Receiver,
} from '../support/webhook-receiver.js';

/** A call stack whose webhooks reach a real receiver, and whose API is where links point. */
export interface ApprovalStack {
  stack: CallStack;
  receiver: Receiver;
  /** The endpoint's Standard Webhooks signing secret. */
  secret: string;
  stop(): Promise<void>;
}

export interface RequestedEvent {
  type: 'approval.requested';
  timestamp: string;
  data: { approval: ApprovalView; links: DecisionLink[] };
}

export async function startApprovalStack(): Promise<ApprovalStack> {
  return startOrUndo(async (stops) => {
    // Decision links are built from PUBLIC_URL: the call stack's API listens where it says.
    const stack = stops.add(await startCallStack());
    const receiver = stops.add(await startReceiver());
    const secret = generateWebhookSecret();
    const set = await stack.request(stack.key, 'PUT', '/v1/webhook-endpoint', {
      body: { url: receiver.url, secret },
    });
    expect(set.status).toBe(200);
    return { stack, receiver, secret, stop: () => stops.stopAll() };
  });
}

/** A standard (calling) key for agent `<policyId>-bot`, governed by its own policy. */
export async function agentUnderPolicy(
  stack: CallStack,
  policyId: string,
  approval: { requested_from: string[]; ttl_seconds: number },
): Promise<TestKey> {
  const agentId = `${policyId}-bot`;
  const key = await createTestKey(stack.db.sql, { env: 'test', access: 'standard', agentId });
  const policy = await stack.request(stack.key, 'PUT', `/v1/policies/${policyId}`, {
    body: {
      name: `Approvals of ${agentId}`,
      agents: [agentId],
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      approval,
    },
  });
  expect(policy.status).toBe(200);
  return key;
}

export function approvalIdOf(answer: Answer): string {
  const error = answer.body.error as { code?: string; approval?: { id: string } } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(
      `expected approval_required, got ${String(answer.status)} ${JSON.stringify(answer.body)}`,
    );
  }
  return error.approval.id;
}

/** The `approval.requested` deliveries of an approval, each verified as a receiver would. */
export async function requestedEvents(
  { receiver, secret }: Pick<ApprovalStack, 'receiver' | 'secret'>,
  approvalId: string,
  count = 1,
): Promise<{ deliveries: Delivery[]; events: RequestedEvent[] }> {
  const deliveries = await deliveriesOf(receiver, `evt_${approvalId}_requested`, count);
  const events = deliveries.map(
    (delivery) => new Webhook(secret).verify(delivery.body, delivery.headers) as RequestedEvent,
  );
  return { deliveries, events };
}

/** approver → link URL, from the first delivery. */
export async function linksOf(
  approvals: Pick<ApprovalStack, 'receiver' | 'secret'>,
  approvalId: string,
): Promise<Record<string, string>> {
  const { events } = await requestedEvents(approvals, approvalId);
  const [event] = events;
  if (!event) throw new Error('no approval.requested event');
  return Object.fromEntries(event.data.links.map((link) => [link.approver, link.url]));
}

export const tokenOf = (url: string): string => url.slice(url.lastIndexOf('/') + 1);
