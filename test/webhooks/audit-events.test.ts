import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import type { Config } from '../../infra/config.js';
import { auditEventWorkflowId } from '../../workflows/webhook-types.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { startReceiver, type Delivery, type Receiver } from '../support/webhook-receiver.js';
import { startTestWorker } from '../support/worker.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let config: Config;
let api: TestApi;
let client: Client;
let receiver: Receiver;
let admin: TestKey;
const secret = generateWebhookSecret();

interface AuditEventBatch {
  type: string;
  timestamp: string;
  data: { events: { event_id: string; cursor: string; user: string; hash: string }[] };
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url, { AUDIT_WEBHOOK_POLL_SECONDS: '1' });
  api = started.add(await startTestApi(config, db.sql));
  client = api.temporal;
  started.add(await startTestWorker(config, db.sql));
  receiver = started.add(await startReceiver());
  admin = await createTestKey(db.sql, { access: 'full', agentId: 'ops' });
});

/** Events written as the service writes them (the insert trigger hashes and numbers each). */
async function writeEvents(user: string, count: number): Promise<void> {
  await insertSyntheticAuditEvents(db.sql, admin.environmentId, { count, idSeed: user, user });
}

function setEndpoint(body: Record<string, unknown>) {
  return fetch(`${api.url}/v1/webhook-endpoint`, {
    method: 'PUT',
    headers: { ...bearer(admin.key), 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, secret, ...body }),
  });
}

const auditDeliveries = () =>
  receiver.deliveries.filter((d) => d.headers['webhook-id']?.startsWith('evt_audit_'));

/** Verified like any receiver would (Standard Webhooks), then parsed. */
function batchOf(delivery: Delivery): AuditEventBatch {
  return new Webhook(secret).verify(delivery.body, delivery.headers) as AuditEventBatch;
}

/** The distinct events the receiver acknowledged (a 2xx answer), in delivery order. */
async function acknowledgedEvents(count: number, budgetMs = 90_000) {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const events = new Map<string, AuditEventBatch['data']['events'][number]>();
    for (const delivery of auditDeliveries()) {
      for (const event of batchOf(delivery).data.events) events.set(event.event_id, event);
    }
    if (events.size >= count) return [...events.values()];
    if (Date.now() > deadline) throw new Error(`${String(events.size)} of ${String(count)} events`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('audit.event webhooks', () => {
  it('refuses an audit_events that is not a boolean', async () => {
    const answer = await setEndpoint({ audit_events: 'yes' });
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as { error: { issues: { path: string }[] } };
    expect(body.error.issues).toEqual([expect.objectContaining({ path: 'audit_events' })]);
  });

  it('delivers every event from the moment it is turned on, in order, in signed batches, through refusals', async () => {
    await writeEvents('u_before', 3);
    // The receiver refuses twice: the batch is retried with Temporal's backoff, never skipped.
    receiver.answer([500, 503]);
    const set = await setEndpoint({ audit_events: true });
    expect(set.status).toBe(200);
    const endpoint = (await set.json()) as { audit_events: boolean; audit_cursor: string | null };
    expect(endpoint.audit_events).toBe(true);
    expect(endpoint.audit_cursor).toMatch(/^\d+$/);
    const running = await client.workflow
      .getHandle(auditEventWorkflowId(admin.environmentId))
      .describe();
    expect(running.status.name).toBe('RUNNING');

    await writeEvents('u_after', 250);
    const events = await acknowledgedEvents(250);
    expect(events.every((event) => event.user === 'u_after')).toBe(true);
    expect(events).toHaveLength(250);

    // Batches of at most 100, oldest first, each event as the export has it.
    const batches = auditDeliveries().map(batchOf);
    expect(batches.every((batch) => batch.type === 'audit.event')).toBe(true);
    expect(Math.max(...batches.map((batch) => batch.data.events.length))).toBeLessThanOrEqual(100);
    const cursors = events.map((event) => BigInt(event.cursor));
    expect(cursors.every((c, i) => i === 0 || c > (cursors[i - 1] ?? 0n))).toBe(true);
    const exported = await fetch(
      `${api.url}/v1/audit/export?cursor=${endpoint.audit_cursor ?? ''}`,
      { headers: bearer(admin.key) },
    );
    const lines = (await exported.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as unknown);
    expect(events).toEqual(lines);
    // The two refused attempts were made, and the batch they carried was delivered after them.
    expect(auditDeliveries().length).toBeGreaterThanOrEqual(5);

    const after = await fetch(`${api.url}/v1/webhook-endpoint`, { headers: bearer(admin.key) });
    expect(((await after.json()) as { audit_cursor: string }).audit_cursor).toBe(
      events.at(-1)?.cursor,
    );
  }, 120_000);

  it('stops when turned off: the workflow ends and later events stay in the export only', async () => {
    const set = await setEndpoint({ audit_events: false });
    expect(((await set.json()) as { audit_cursor: string | null }).audit_cursor).toBeNull();
    const handle = client.workflow.getHandle(auditEventWorkflowId(admin.environmentId));
    await expect(handle.result()).resolves.toBe('off');
    const before = auditDeliveries().length;
    await writeEvents('u_off', 5);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(auditDeliveries()).toHaveLength(before);
  }, 60_000);
});
