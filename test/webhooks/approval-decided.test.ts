import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { openApproval, settleApproval } from '../../activities/db/approvals.js';
import { setWebhookEndpoint } from '../../activities/db/webhook-endpoints.js';
import { webhookActivities } from '../../activities/webhooks/webhook-activities.js';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import type { Config } from '../../infra/config.js';
import { createLogger } from '../../infra/logger.js';
import { PinoTemporalLogger } from '../../infra/temporal/runtime.js';
import { createWorker, type GatehouseWorker } from '../../worker/worker.js';
import { approvalDecidedWebhook } from '../../workflows/webhook.js';
import type { ApprovalEvent } from '../../workflows/webhook-types.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { testEnv } from '../support/stack-env.js';
import { installTestRuntime, testLogger } from '../support/test-log.js';
import { startReceiver, type Delivery, type Receiver } from '../support/webhook-receiver.js';
import { historyText } from '../support/workflow-history.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let config: Config;
let api: TestApi;
let client: Client;
let worker: GatehouseWorker;
let running: Promise<void>;
let connection: NativeConnection;
let receiver: Receiver;
let admin: TestKey;
const workerLogs: string[] = [];
const secret = generateWebhookSecret();

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url);
  api = started.add(await startTestApi(config, db.sql));
  client = api.temporal;
  installTestRuntime();
  // The worker of test/support, with its log lines kept to prove the secret is never in them.
  connection = await NativeConnection.connect({ address: config.temporal.address });
  started.push(() => connection.close());
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      workerLogs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  worker = await createWorker({
    config,
    sql: db.sql,
    logger: createLogger({ level: 'debug' }, sink),
    connection,
    workflowBundle: { codePath: testEnv('workflowBundle') },
  });
  running = worker.run();
  started.push(async () => {
    worker.shutdown();
    await running;
  });
  receiver = started.add(await startReceiver());
  admin = await createTestKey(db.sql, { env: 'production', access: 'full', agentId: 'ops' });
  const set = await fetch(`${api.url}/v1/webhook-endpoint`, {
    method: 'PUT',
    headers: { ...bearer(admin.key), 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, secret }),
  });
  expect(set.status).toBe(200);
});

async function decidedApproval(environmentId: string) {
  const approval = await openApproval(db.sql, {
    environmentId,
    fingerprint: randomUUID(),
    workflowId: `call/test/${randomUUID()}`,
    action: 'acme.create_task',
    scope: 'write',
    agentId: 'billing-bot',
    userExternalId: 'u_123',
    requestedFrom: ['alice'],
    request: { input: { title: 'Pay invoice 42' } },
    policyId: 'default',
    policyVersion: 1,
    policyRule: 'defaults.write → ask',
    ttlSeconds: 3600,
  });
  const settled = await settleApproval(db.sql, approval.id, 'approved', 'alice');
  if (!settled) throw new Error('approval was not pending');
  return settled;
}

async function deliver(environmentId: string, approvalId: string) {
  const event: ApprovalEvent = { environmentId, approvalId, eventId: `evt_${randomUUID()}` };
  const workflowId = `webhook/approval-decided/${event.eventId}`;
  const result = await client.workflow.execute(approvalDecidedWebhook, {
    taskQueue: config.temporal.taskQueue,
    workflowId,
    args: [event],
  });
  return { event, workflowId, result };
}

const signatureOf = (delivery: Delivery | undefined) => delivery?.headers['webhook-signature'];

describe('approval.decided', () => {
  it('POSTs the decided approval, signed so a Standard Webhooks receiver verifies it', async () => {
    receiver.answer([200]);
    const before = receiver.deliveries.length;
    const approval = await decidedApproval(admin.environmentId);
    const { event, result } = await deliver(admin.environmentId, approval.id);
    expect(result).toBe('delivered');

    const received = receiver.deliveries.slice(before);
    expect(received).toHaveLength(1);
    const [delivery] = received;
    if (!delivery) throw new Error('no delivery');
    expect(delivery.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': event.eventId,
      'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/=]+$/),
    });
    expect(new Webhook(secret).verify(delivery.body, delivery.headers)).toEqual({
      type: 'approval.decided',
      timestamp: approval.decidedAt?.toISOString(),
      data: {
        approval: {
          id: approval.id,
          status: 'approved',
          requested_from: ['alice'],
          action: 'acme.create_task',
          scope: 'write',
          agent_id: 'billing-bot',
          user: 'u_123',
          request: { input: { title: 'Pay invoice 42' } },
          policy: { id: 'default', version: 1, rule: 'defaults.write → ask' },
          created_at: approval.createdAt.toISOString(),
          expires_at: approval.expiresAt.toISOString(),
          decided_by: 'alice',
          decided_at: approval.decidedAt?.toISOString(),
          // Settled here without a decision of its own: one was needed, none is kept.
          quorum: 1,
          decisions: [],
          approvals_needed: 0,
          // What the policy in force now decides on the call: an approval outlives the policy
          // that raised it, so the approver sees whether a newer version would still hold it.
          policy_in_force: { id: 'default', version: 1, decision: 'ask', rule: 'defaults.write' },
        },
      },
    });
    expect(() =>
      new Webhook(generateWebhookSecret()).verify(delivery.body, delivery.headers),
    ).toThrow(/No matching signature/);
  });

  it('is retried by Temporal until the receiver accepts it, with the same webhook-id', async () => {
    receiver.answer([500, 500, 200]);
    const before = receiver.deliveries.length;
    const approval = await decidedApproval(admin.environmentId);
    const { event, result, workflowId } = await deliver(admin.environmentId, approval.id);
    expect(result).toBe('delivered');

    const attempts = receiver.deliveries.slice(before);
    expect(attempts).toHaveLength(3);
    expect(attempts.map((a) => a.headers['webhook-id'])).toEqual([
      event.eventId,
      event.eventId,
      event.eventId,
    ]);
    for (const attempt of attempts) {
      expect(new Webhook(secret).verify(attempt.body, attempt.headers)).toMatchObject({
        data: { approval: { id: approval.id } },
      });
    }

    // The secret and what it signs travel neither through Temporal nor into any log line.
    const history = await historyText(client, workflowId);
    const logs = [...api.logs, ...workerLogs].join('\n');
    for (const text of [history, logs]) {
      expect(text).not.toContain(secret.slice('whsec_'.length));
      for (const attempt of attempts) {
        const signature = signatureOf(attempt)?.slice('v1,'.length) ?? 'missing';
        expect(text).not.toContain(signature);
      }
    }
    expect(history).toContain('answered 500');
    expect(workerLogs.some((line) => line.includes('webhook delivered'))).toBe(true);
  });

  it('delivers nothing, successfully, when the environment has no endpoint', async () => {
    const staging = await createTestKey(db.sql, { env: 'staging', access: 'full' });
    const before = receiver.deliveries.length;
    const approval = await decidedApproval(staging.environmentId);
    const { result } = await deliver(staging.environmentId, approval.id);
    expect(result).toBe('no_endpoint');
    expect(receiver.deliveries.length).toBe(before);
  });

  it.each([
    ['a loopback address', (url: string) => url],
    ['a name that resolves to loopback', (url: string) => url.replace('127.0.0.1', 'localhost')],
  ])(
    'refuses at delivery time %s when private addresses are not allowed',
    async (_what, address) => {
      const locked = testConfig(db.url, { WEBHOOK_ALLOW_PRIVATE: 'false' });
      const internal = await createTestKey(db.sql, {
        env: `internal-${randomUUID().slice(0, 8)}`,
        access: 'full',
      });
      // Written past the API's own check, as an endpoint whose DNS answer changed would be.
      await setWebhookEndpoint(
        db.sql,
        locked.encryption,
        internal.environmentId,
        { url: address(receiver.url), secret, auditEvents: false },
        { agentId: 'test' },
      );
      const approval = await decidedApproval(internal.environmentId);
      const before = receiver.deliveries.length;
      const activities = webhookActivities({
        sql: db.sql,
        config: locked,
        logger: createLogger({ level: 'silent' }),
      });
      await expect(
        new MockActivityEnvironment(undefined, {
          logger: new PinoTemporalLogger(testLogger('warn')),
        }).run((event: ApprovalEvent) => activities.deliverApprovalDecided(event), {
          environmentId: internal.environmentId,
          approvalId: approval.id,
          eventId: `evt_${randomUUID()}`,
        }),
      ).rejects.toThrow(/loopback, private or link-local/);
      expect(receiver.deliveries.length).toBe(before);
    },
  );
});
