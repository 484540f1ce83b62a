// The client's Standard Webhooks verifier on real deliveries: it answers the typed
// `approval.requested` and `approval.decided` events, and refuses a tampered body, a wrong secret
// and a replayed old delivery.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from 'gatehouse/client';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import {
  deliveriesOf,
  receiveWebhooks,
  type Delivery,
  type Receiver,
} from '../support/webhook-receiver.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;
let receiver: Receiver;
let secret: string;
let requested: Delivery;
let decided: Delivery;
let approvalId: string;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_ann');
  ({ receiver, secret } = await receiveWebhooks(stack));
  started.add(receiver);
  const held = await stack.run('acme.create_task', { user: 'u_ann', input: { title: 'hooked' } });
  approvalId = (held.body.error as { approval: { id: string } }).approval.id;
  [requested] = (await deliveriesOf(receiver, `evt_${approvalId}_requested`)) as [Delivery];
  const approved = await stack.request(
    stack.approver,
    'POST',
    `/v1/approvals/${approvalId}/approve`,
  );
  expect(approved.status).toBe(200);
  [decided] = (await deliveriesOf(receiver, `evt_${approvalId}`)) as [Delivery];
}, 300_000);

function refusal(call: () => WebhookEvent): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the delivery to be refused');
}

describe('verifyWebhook', () => {
  it('answers approval.requested with the approval and its decision links', () => {
    const event = verifyWebhook(secret, requested.body, requested.headers);
    if (event.type !== 'approval.requested') throw new Error(`got ${event.type}`);
    expect(event.data.approval).toMatchObject({ id: approvalId, status: 'pending', user: 'u_ann' });
    expect(event.data.links).toEqual([
      expect.objectContaining({ approver: expect.any(String), url: expect.any(String) }),
    ]);
  });

  it('answers approval.decided with the decided approval, from raw bytes and Headers alike', () => {
    const event = verifyWebhook(
      secret,
      Buffer.from(decided.body, 'utf8'),
      new Headers(decided.headers),
    );
    expect(event).toMatchObject({
      type: 'approval.decided',
      data: { approval: { id: approvalId, status: 'approved', decided_by: 'approver' } },
    });
  });

  it('refuses a tampered body, a wrong secret and an old delivery', () => {
    const tampered = decided.body.replace('"approved"', '"rejected"');
    expect(tampered).not.toBe(decided.body);
    expect(refusal(() => verifyWebhook(secret, tampered, decided.headers))).toBeInstanceOf(
      WebhookVerificationError,
    );
    expect(
      refusal(() => verifyWebhook(generateWebhookSecret(), decided.body, decided.headers)),
    ).toBeInstanceOf(WebhookVerificationError);
    const old = {
      ...decided.headers,
      'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600),
    };
    expect(refusal(() => verifyWebhook(secret, decided.body, old))).toBeInstanceOf(
      WebhookVerificationError,
    );
  });
});
