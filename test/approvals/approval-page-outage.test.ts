import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findApproval } from '../../activities/db/approvals.js';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { CONTENT_SECURITY_POLICY } from '../../api/connect/pages/index.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import type { TestKey } from '../support/keys.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { agentUnderPolicy, approvalIdOf, linksOf } from './approval-stack.js';
import { answeredWithin } from '../support/answered-within.js';
import { eventually } from '../support/eventually.js';
import { stopsAfterAll } from '../support/stops.js';
import { startRestartableTemporal, type RestartableTemporal } from '../support/temporal-server.js';

/**
 * With Temporal stopped, a decision posted on the hosted approval page is
 * answered as the API answers it (503, "not applied, decide again"), on a branded page, and
 * nothing is decided. Temporal runs here on a server of this file's own, with its state in a
 * file, so that it can be stopped and started again with the held call still in it.
 */
const DEADLINE_MS = 5000;
/** Far above the deadline, for a loaded machine: only "an answer came" is asserted. */
const BUDGET_MS = 45_000;

let temporal: RestartableTemporal;
let stack: CallStack;
let receiver: Receiver;
let secret: string;
let agent: TestKey;
let publicOrigin: string;
const started = stopsAfterAll();

beforeAll(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-page-outage-'));
  started.push(() => rm(dir, { recursive: true, force: true }));
  temporal = await startRestartableTemporal({ dbFile: path.join(dir, 'temporal.sqlite') });
  // close, not stop: stop only stops the server, and its proxy would keep listening after the
  // file, holding the jest worker open ("failed to exit gracefully").
  started.push(() => temporal.close());
  // Decision links are built from PUBLIC_URL: the call stack's API listens where it says.
  stack = started.add(
    await startCallStack({
      env: { TEMPORAL_ADDRESS: temporal.address, REQUEST_DEADLINE_MS: String(DEADLINE_MS) },
    }),
  );
  publicOrigin = new URL(stack.config.api.publicUrl).origin;
  receiver = started.add(await startReceiver());
  secret = generateWebhookSecret();
  const set = await stack.request(stack.key, 'PUT', '/v1/webhook-endpoint', {
    body: { url: receiver.url, secret },
  });
  expect(set.status).toBe(200);
  await stack.connect('u_page_outage');
  agent = await agentUnderPolicy(stack, 'outage', { requested_from: ['alice'], ttl_seconds: 3600 });
}, 120_000);

function answered<T>(what: string, pending: Promise<T>): Promise<T> {
  return answeredWithin(what, BUDGET_MS, pending);
}

async function open(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Posts the page's form as a browser on the page would. */
async function decide(url: string, decision: 'approve' | 'reject') {
  const review = await open(url);
  expect(review.status).toBe(200);
  const csrf = /name="csrf" value="([^"]+)"/.exec(review.text)?.[1] ?? '';
  return answered(
    decision,
    open(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: publicOrigin,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ csrf, decision }).toString(),
    }),
  );
}

describe('the approval page while Temporal is stopped', () => {
  it('answers a decision 503 "not applied, try again" on a branded page, and decides nothing', async () => {
    const title = 'decided on the page while Temporal was stopped';
    const approvalId = approvalIdOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_page_outage', input: { title } },
        { key: agent },
      ),
    );
    const url = (await linksOf({ receiver, secret }, approvalId)).alice ?? '';
    const appCalls = stack.acme.demo.stats().apiRequests;

    // The worker first, so that it does not retry its polls against a server that is gone.
    await stack.worker.stop();
    await temporal.stop();
    const page = await decide(url, 'approve');
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.text).toMatch(/^<!doctype html>/);
    expect(page.text).toContain('Your decision was not applied');
    expect(page.text).toContain('try again');
    expect(page.text).toContain('decision_not_applied');
    expect(page.text).not.toContain('Something went wrong');

    // Nothing was decided, and the call did not run.
    const stored = await findApproval(stack.db.sql, stack.environmentId, approvalId);
    expect(stored).toMatchObject({ status: 'pending', decidedBy: null });
    expect(stack.acme.demo.stats().apiRequests).toBe(appCalls);

    // Temporal back with its state: the person tries again, as told, and the decision applies
    // once; the agent's retry then runs the call once.
    await temporal.start();
    await stack.restartWorker();
    // Until Temporal serves the held call again (a loaded machine takes a while), a decision is
    // answered as above, 503 "not applied", and decides nothing; the person tries again.
    const again = await eventually('the decision applies once Temporal is back', async () => {
      const attempt = await decide(url, 'approve');
      if (attempt.status !== 503) return attempt;
      expect(attempt.text).toContain('Your decision was not applied');
      const still = await findApproval(stack.db.sql, stack.environmentId, approvalId);
      expect(still).toMatchObject({ status: 'pending', decidedBy: null });
      return null;
    });
    expect(again.status).toBe(200);
    const decided = await findApproval(stack.db.sql, stack.environmentId, approvalId);
    expect(decided).toMatchObject({ status: 'approved', decidedBy: 'alice (decision link)' });
    const ran = await answered(
      'run',
      stack.run('acme.create_task', { user: 'u_page_outage', input: { title } }, { key: agent }),
    );
    expect(ran.status).toBe(200);
    expect(stack.acme.demo.stats().apiRequests - appCalls).toBe(1);
  }, 180_000);
});
