import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { v7 as uuidv7 } from 'uuid';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { callFingerprint } from '../../api/calls/fingerprint.js';
import { CALL_WORKFLOW, callUpdate, callWorkflowId } from '../../workflows/call-messages.js';
import type { CallRequest } from '../../workflows/call-types.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

let stack: CallStack;
let readOnly: TestKey;
let business: TestKey;
let readScopeOnly: TestKey;
/** Governed by policy `quick`, whose approvals expire after 2 seconds. */
let quick: TestKey;
/**
 * Governed by policy `relaxed` (6 s approvals): long enough to decide and retry before the expiry
 * even on a loaded machine, short enough to wait out.
 */
let relaxed: TestKey;
/** Agent `ops@example.com`: the decider that `quick` and `relaxed` approvals are requested from. */
let ops: TestKey;
/** Governed by policy `named`: approvals requested from ops@example.com, lasting an hour. */
let named: TestKey;

interface ApprovalRef {
  id: string;
  status: string;
  requested_from: string[];
  expires_at: string;
}

function approvalOf(answer: Answer): ApprovalRef {
  const error = answer.body.error as { code: string; approval?: ApprovalRef } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(
      `expected approval_required, got ${answer.status} ${JSON.stringify(answer.body)}`,
    );
  }
  return error.approval;
}

const codeOf = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code;

async function titles(user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  for (const user of ['u_ann', 'u_ben', 'u_cat', 'u_dan', 'u_eve', 'u_fay', 'u_gus']) {
    await stack.connect(user);
  }
  readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
  // A dashboard that decides: standard keys decide only when granted approvals:decide.
  business = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    audience: 'business',
    agentId: 'dashboard',
    scopes: ['approvals:read', 'approvals:decide'],
  });
  readScopeOnly = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    scopes: ['approvals:read'],
  });
  quick = await keyUnderOwnPolicy('quick', 2);
  relaxed = await keyUnderOwnPolicy('relaxed', 6);
  named = await keyUnderOwnPolicy('named', 3600);
  ops = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'full',
    agentId: 'ops@example.com',
  });
});

/** A full key for agent `<policyId>-bot`, governed by its own policy with this approval ttl. */
async function keyUnderOwnPolicy(policyId: string, ttlSeconds: number): Promise<TestKey> {
  const agentId = `${policyId}-bot`;
  const key = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId });
  const policy = await stack.request(stack.key, 'PUT', `/v1/policies/${policyId}`, {
    body: {
      name: `Approvals expiring after ${String(ttlSeconds)} s`,
      agents: [agentId],
      defaults: { read: 'allow', write: 'ask', destructive: 'ask' },
      approval: { requested_from: ['ops@example.com'], ttl_seconds: ttlSeconds },
    },
  });
  expect(policy.status).toBe(200);
  return key;
}

describe('a held call', () => {
  it('gets one approval, approved once, and runs exactly once on retry', async () => {
    const input = { title: `approved ${String(Date.now())}` };
    const first = approvalOf(await stack.run('acme.create_task', { user: 'u_ann', input }));
    expect(first).toMatchObject({ status: 'pending', requested_from: [] });
    expect(Date.parse(first.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);

    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${first.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      id: first.id,
      status: 'pending',
      action: 'acme.create_task',
      scope: 'write',
      agent_id: 'test-agent',
      user: 'u_ann',
      request: { action: 'acme.create_task', user: 'u_ann', via: 'api', input },
      decided_by: null,
      decided_at: null,
    });
    expect(await titles('u_ann')).not.toContain(input.title);

    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${first.id}/approve`,
    );
    expect(approved.body).toEqual({ id: first.id, status: 'approved', decided_by: 'approver' });
    const twice = await stack.request(stack.approver, 'POST', `/v1/approvals/${first.id}/reject`);
    expect(twice.status).toBe(409);

    const ran = await stack.run('acme.create_task', { user: 'u_ann', input });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect((await titles('u_ann')).filter((title) => title === input.title)).toHaveLength(1);

    // The approval is spent: the same call again asks anew.
    const next = approvalOf(await stack.run('acme.create_task', { user: 'u_ann', input }));
    expect(next.id).not.toBe(first.id);
    const after = await stack.request(stack.key, 'GET', `/v1/approvals/${first.id}`);
    expect(after.body).toMatchObject({ status: 'approved', decided_by: 'approver' });
    expect(after.body.decided_at).toEqual(expect.any(String));
  });

  it('rejected: identical calls are denied naming the approval until it expires', async () => {
    const input = { title: 'rejected one' };
    const held = approvalOf(await stack.run('acme.create_task', { user: 'u_ben', input }));
    const rejected = await stack.request(stack.approver, 'POST', `/v1/approvals/${held.id}/reject`);
    expect(rejected.body).toEqual({ id: held.id, status: 'rejected', decided_by: 'approver' });
    const retry = await stack.run('acme.create_task', { user: 'u_ben', input });
    expect(retry.status).toBe(403);
    expect(retry.body.error).toMatchObject({
      code: 'denied_by_policy',
      approval: { id: held.id, status: 'rejected' },
    });
    expect(await titles('u_ben')).not.toContain(input.title);
  });

  it('expired: status expired, deciding is 409, and the next call raises a new approval', async () => {
    const input = { title: 'too late' };
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_cat', input }, { key: quick }),
    );
    expect(held.requested_from).toEqual(['ops@example.com']);
    // Past its expiry, which the API reads off the clock.
    await sleep(Math.max(0, Date.parse(held.expires_at) - Date.now()) + 500);
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${held.id}`);
    expect(view.body.status).toBe('expired');
    const late = await stack.request(ops, 'POST', `/v1/approvals/${held.id}/approve`);
    expect(late.status).toBe(409);
    expect(codeOf(late)).toBe('conflict');
    const fresh = approvalOf(
      await stack.run('acme.create_task', { user: 'u_cat', input }, { key: quick }),
    );
    expect(fresh.id).not.toBe(held.id);
    // The workflow itself records the expiry, when its timer fires (late, on a loaded machine).
    await eventually('the workflow records the expiry', async () => {
      const [row] = await stack.db.sql<{ status: string }[]>`
        select status from approvals where id = ${held.id} and status = 'expired'`;
      return row;
    });
  });

  it('50 concurrent identical calls share one approval; 5 retries after approval write once', async () => {
    const input = { title: `crowd ${String(Date.now())}` };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => stack.run('acme.create_task', { user: 'u_dan', input })),
    );
    const ids = new Set(answers.map((answer) => approvalOf(answer).id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as [string];
    const [count] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from approvals where user_external_id = 'u_dan'`;
    expect(count?.n).toBe(1);
    const [audited] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from audit_events where user_external_id = 'u_dan' and decision = 'blocked'`;
    expect(audited?.n).toBe(50);

    expect(
      (await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`)).status,
    ).toBe(200);
    const before = stack.acme.demo.stats().apiRequests;
    const retries = await Promise.all(
      Array.from({ length: 5 }, () => stack.run('acme.create_task', { user: 'u_dan', input })),
    );
    const ran = retries.filter((answer) => answer.status === 200);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    for (const answer of ran)
      expect(answer.body).toMatchObject({ ok: true, data: { title: input.title } });
    // Late retries met a closed call and were held anew; none reached the app.
    for (const answer of retries.filter((a) => a.status !== 200)) {
      expect(codeOf(answer)).toBe('approval_required');
    }
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect((await titles('u_dan')).filter((title) => title === input.title)).toHaveLength(1);
  });
});

describe('deciding', () => {
  it('needs approvals:decide', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_eve', input: { title: 'scoped' } }),
    );
    for (const key of [readOnly, readScopeOnly]) {
      const answer = await stack.request(key, 'POST', `/v1/approvals/${held.id}/approve`);
      expect(answer.status).toBe(403);
      expect(codeOf(answer)).toBe('insufficient_access');
    }
    const view = await stack.request(readScopeOnly, 'GET', `/v1/approvals/${held.id}`);
    expect(view.body.status).toBe('pending');
  });

  it('answers a business key in the management shape, and decides through /decision', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_fay', input: { title: 'managed' } }),
    );
    const view = await stack.request(business, 'GET', `/v1/approvals/${held.id}`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ id: held.id, status: 'pending' });

    const bad = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'maybe' },
    });
    expect(bad.status).toBe(400);
    const denied = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'deny' },
    });
    expect(denied.status).toBe(200);
    expect(denied.body.data).toMatchObject({
      id: held.id,
      status: 'rejected',
      decided_by: 'dashboard',
    });
    const again = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'approve' },
    });
    expect(again.status).toBe(409);
  });

  it.each([
    ['not-a-uuid', 400],
    ['019a0000-0000-7000-8000-000000000000', 404],
  ])('GET /v1/approvals/%s → %i', async (id, status) => {
    const answer = await stack.request(stack.key, 'GET', `/v1/approvals/${id}`);
    expect(answer.status).toBe(status);
  });
});

/** A request sent with the `X-API-Key` scheme (apiKey) instead of `Authorization: Bearer`. */
async function withApiKeyHeader(
  key: TestKey,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${stack.api.url}${path}`, {
    method,
    headers: {
      'x-api-key': key.key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const issuePaths = (answer: Answer) =>
  ((answer.body.error as { issues?: { path: string }[] } | undefined)?.issues ?? []).map(
    (issue) => issue.path,
  );

describe('the management operations (get_approval, decide_approval)', () => {
  let cannotRead: TestKey;
  let cannotDecide: TestKey;

  beforeAll(async () => {
    for (const user of ['u_hal', 'u_ivy', 'u_jon', 'u_kit', 'u_lou']) await stack.connect(user);
    cannotRead = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      audience: 'business',
      agentId: 'dashboard-decide-only',
      scopes: ['approvals:decide'],
    });
    cannotDecide = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      audience: 'business',
      agentId: 'dashboard-read-only',
      scopes: ['approvals:read'],
    });
  });

  it('need approvals:read and approvals:decide, with either key scheme', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_hal', input: { title: 'scheme check' } }),
    );
    const path = `/v1/approvals/${held.id}`;
    for (const send of [
      (key: TestKey, method: string, url: string, body?: unknown) =>
        stack.request(key, method, url, body === undefined ? {} : { body }),
      withApiKeyHeader,
    ]) {
      const unreadable = await send(cannotRead, 'GET', path);
      expect(unreadable.status).toBe(403);
      expect(codeOf(unreadable)).toBe('insufficient_access');
      const undecidable = await send(cannotDecide, 'POST', `${path}/decision`, {
        decision: 'approve',
      });
      expect(undecidable.status).toBe(403);
      expect(codeOf(undecidable)).toBe('insufficient_access');

      const view = await send(business, 'GET', path);
      expect(view.status).toBe(200);
      expect(view.body.data).toMatchObject({ id: held.id, status: 'pending' });
      const readable = await send(cannotDecide, 'GET', path);
      expect(readable.status).toBe(200);
      expect(readable.body.data).toMatchObject({ id: held.id, status: 'pending' });
    }
    const decided = await withApiKeyHeader(business, 'POST', `${path}/decision`, {
      decision: 'deny',
    });
    expect(decided.status).toBe(200);
    expect(decided.body.data).toMatchObject({
      id: held.id,
      status: 'rejected',
      decided_by: 'dashboard',
    });
  });

  describe('decide_approval validation', () => {
    let held: ApprovalRef;
    beforeAll(async () => {
      held = approvalOf(
        await stack.run('acme.create_task', { user: 'u_ivy', input: { title: 'malformed' } }),
      );
    });

    it.each<[string, string, unknown]>([
      ['decision absent', 'decision', {}],
      ["decision 'reject'", 'decision', { decision: 'reject' }],
      ["decision 'approved'", 'decision', { decision: 'approved' }],
      ["decision 'Approve'", 'decision', { decision: 'Approve' }],
      ['an unknown property', 'note', { decision: 'approve', note: 'ok by me' }],
      ['an array body', 'body', [{ decision: 'approve' }]],
    ])('refuses %s (400 naming %s) and leaves the approval pending', async (_what, path, body) => {
      const answer = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
        body,
      });
      expect(answer.status).toBe(400);
      expect(codeOf(answer)).toBe('invalid_request');
      expect(issuePaths(answer)).toContain(path);
      const view = await stack.request(business, 'GET', `/v1/approvals/${held.id}`);
      expect(view.body.data).toMatchObject({ id: held.id, status: 'pending', decided_by: null });
      const [row] = await stack.db.sql<{ status: string }[]>`
        select status from approvals where id = ${held.id}`;
      expect(row?.status).toBe('pending');
    });
  });

  it.each([
    ['version 0', '019a0000-0000-0000-8000-000000000000'],
    ['version 9', '019a0000-0000-9000-8000-000000000000'],
    ['wrong variant', '019a0000-0000-7000-c000-000000000000'],
  ])('refuses a %s UUID as approvalId on both operations', async (_what, id) => {
    const view = await stack.request(business, 'GET', `/v1/approvals/${id}`);
    expect(view.status).toBe(400);
    expect(codeOf(view)).toBe('invalid_request');
    expect(issuePaths(view)).toEqual(['approvalId']);
    const decided = await stack.request(business, 'POST', `/v1/approvals/${id}/decision`, {
      body: { decision: 'approve' },
    });
    expect(decided.status).toBe(400);
    expect(codeOf(decided)).toBe('invalid_request');
    expect(issuePaths(decided)).toEqual(['approvalId']);
  });

  it.each(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'])(
    'accepts %s as approvalId and answers 404 not_found',
    async (id) => {
      const view = await stack.request(business, 'GET', `/v1/approvals/${id}`);
      expect(view.status).toBe(404);
      expect(codeOf(view)).toBe('not_found');
      const decided = await stack.request(business, 'POST', `/v1/approvals/${id}/decision`, {
        body: { decision: 'approve' },
      });
      expect(decided.status).toBe(404);
      expect(codeOf(decided)).toBe('not_found');
    },
  );

  it('approve through /decision releases the waiting call, which writes once', async () => {
    const input = { title: `decided ${String(Date.now())}` };
    const held = approvalOf(await stack.run('acme.create_task', { user: 'u_jon', input }));
    const decided = await stack.request(business, 'POST', `/v1/approvals/${held.id}/decision`, {
      body: { decision: 'approve' },
    });
    expect(decided.status).toBe(200);
    expect(decided.body.data).toMatchObject({
      id: held.id,
      status: 'approved',
      decided_by: 'dashboard',
      decided_at: expect.any(String),
    });
    const before = stack.acme.demo.stats().apiRequests;
    const ran = await stack.run('acme.create_task', { user: 'u_jon', input });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect((await titles('u_jon')).filter((title) => title === input.title)).toHaveLength(1);
  });
});

describe('a rejected approval that then expires', () => {
  it('denies identical calls, audited with the approval, then a new approval is raised', async () => {
    const input = { title: 'rejected then expired' };
    const call = () => stack.run('acme.create_task', { user: 'u_kit', input }, { key: relaxed });
    const held = approvalOf(await call());
    const rejected = await stack.request(ops, 'POST', `/v1/approvals/${held.id}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ id: held.id, status: 'rejected' });

    const retry = await call();
    expect(retry.status).toBe(403);
    expect(retry.body.error).toMatchObject({
      code: 'denied_by_policy',
      approval: { id: held.id, status: 'rejected' },
    });
    const denials = await stack.db.sql<{ approvalId: string | null }[]>`
      select approval_id from audit_events
      where user_external_id = 'u_kit' and decision = 'denied'`;
    expect(denials).toEqual([{ approvalId: held.id }]);

    await sleep(Math.max(0, Date.parse(held.expires_at) - Date.now()) + 500);
    const fresh = approvalOf(await call());
    expect(fresh.id).not.toBe(held.id);
    expect(fresh.status).toBe('pending');
    expect(await titles('u_kit')).not.toContain(input.title);
  });
});

describe('operator labels', () => {
  it('a held call is found by decision blocked and its approval id', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_lou', input: { title: 'labelled' } }),
    );
    const query = `WorkflowType = 'governedCall' AND GatehouseDecision = 'blocked' AND GatehouseApprovalId = '${held.id}'`;
    const { temporal } = stack.api;
    const found = async () => {
      const ids: string[] = [];
      for await (const execution of temporal.workflow.list({ query })) {
        ids.push(execution.workflowId);
      }
      return ids;
    };
    // Visibility is eventually consistent.
    const ids = await eventually('the held call listed by its labels', async () => {
      const listed = await found();
      return listed.length > 0 ? listed : null;
    });
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(/^call\/test\/acme\.create_task\/[0-9a-f]{32}$/);
    expect((await temporal.workflow.count(query)).count).toBe(1);
  });
});

describe('call workflow ids', () => {
  /** The workflow holding an approval, as Temporal describes it, and the approval's own row. */
  async function holderOf(approvalId: string) {
    const [row] = await stack.db.sql<{ fingerprint: string; workflowId: string }[]>`
      select fingerprint, workflow_id from approvals where id = ${approvalId}`;
    if (!row) throw new Error(`no approval ${approvalId}`);
    return {
      row,
      description: await stack.api.temporal.workflow.getHandle(row.workflowId).describe(),
    };
  }

  it('name the action, then the fingerprint’s first 128 bits: call/<env>/<action>/<32 hex>', async () => {
    await stack.connect('u_ids');
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_ids', input: { title: 'readable id' } }),
    );
    const { row, description } = await holderOf(held.id);
    expect(row.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(description.workflowId).toBe(
      `call/test/acme.create_task/${row.fingerprint.slice(0, 32)}`,
    );
    expect(description.type).toBe('governedCall');
    expect(description.status.name).toBe('RUNNING');
  });

  it('name a proxy call <app>.proxy', async () => {
    await stack.connect('u_ids_proxy');
    const held = approvalOf(
      await stack.request(stack.key, 'POST', '/v1/proxy/acme/tasks', {
        body: { title: 'readable proxy id' },
        headers: { 'service-user': 'u_ids_proxy' },
      }),
    );
    const { row, description } = await holderOf(held.id);
    expect(description.workflowId).toBe(`call/test/acme.proxy/${row.fingerprint.slice(0, 32)}`);
    expect(description.status.name).toBe('RUNNING');
  });

  it('a call held under the older call/<env>/<fingerprint> id is still reached by its retry', async () => {
    await stack.connect('u_legacy');
    const input = { title: `held under the older id ${String(Date.now())}` };
    const target = {
      kind: 'action' as const,
      action: 'acme.create_task',
      app: 'acme',
      scope: 'write' as const,
      input,
    };
    const call: CallRequest = {
      environmentId: stack.environmentId,
      environmentName: 'test',
      agentId: 'test-agent',
      userExternalId: 'u_legacy',
      via: 'api',
      fingerprint: callFingerprint({
        environmentId: stack.environmentId,
        agentId: 'test-agent',
        userExternalId: 'u_legacy',
        target,
        idempotencyKey: undefined,
      }),
      target,
      retryWindowSeconds: stack.config.approvals.retryWindowSeconds,
    };
    // What an older API did: the same call, under the id without the action.
    const legacyId = `call/test/${call.fingerprint}`;
    const { temporal } = stack.api;
    const first = await temporal.workflow.executeUpdateWithStart(callUpdate, {
      args: [{ requestId: uuidv7(), traceId: 'legacy', deadline: Date.now() + 30_000 }],
      startWorkflowOperation: new WithStartWorkflowOperation(CALL_WORKFLOW, {
        taskQueue: stack.config.temporal.taskQueue,
        workflowId: legacyId,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        args: [call],
      }),
    });
    expect(first).toMatchObject({ kind: 'error', code: 'approval_required' });
    const [row] = await stack.db.sql<{ id: string; workflowId: string }[]>`
      select id, workflow_id from approvals where fingerprint = ${call.fingerprint}`;
    expect(row?.workflowId).toBe(legacyId);
    const approvalId = row?.id ?? '';

    // While pending, the retry is answered from Postgres with the same approval.
    expect(approvalOf(await stack.run('acme.create_task', { user: 'u_legacy', input })).id).toBe(
      approvalId,
    );
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.body).toMatchObject({ status: 'approved' });

    // Approved: the retry runs once, in the workflow that holds the approval, not a new one.
    const ran = await stack.run('acme.create_task', { user: 'u_legacy', input });
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect((await titles('u_legacy')).filter((title) => title === input.title)).toHaveLength(1);
    const [spent] = await stack.db.sql<{ consumedAt: Date | null }[]>`
      select consumed_at from approvals where id = ${approvalId}`;
    expect(spent?.consumedAt).toBeInstanceOf(Date);
    expect(await temporal.workflow.getHandle(legacyId).result()).toMatchObject({
      decision: 'allowed',
      approvalId,
    });
    const readable = temporal.workflow.getHandle(callWorkflowId(call)).describe();
    await expect(readable).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});

describe('approval webhooks without an endpoint', () => {
  it('start no webhook workflow at all: held, approved, run', async () => {
    await stack.connect('u_quiet');
    const input = { title: `no receiver ${String(Date.now())}` };
    const held = approvalOf(await stack.run('acme.create_task', { user: 'u_quiet', input }));
    await stack.request(stack.approver, 'POST', `/v1/approvals/${held.id}/approve`);
    const ran = await stack.run('acme.create_task', { user: 'u_quiet', input });
    expect(ran.status).toBe(200);
    const { temporal } = stack.api;
    for (const kind of ['approval.requested', 'approval.decided']) {
      await expect(
        temporal.workflow.getHandle(`webhook/${kind}/${held.id}`).describe(),
      ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
  });
});

describe('approval.decided', () => {
  it('is delivered signed when an approval is decided, once per approval', async () => {
    const receiver = await startReceiver();
    try {
      const secret = generateWebhookSecret();
      const set = await stack.request(stack.key, 'PUT', '/v1/webhook-endpoint', {
        body: { url: receiver.url, secret },
      });
      expect(set.status).toBe(200);
      const held = approvalOf(
        await stack.run('acme.create_task', { user: 'u_eve', input: { title: 'announced' } }),
      );
      await stack.request(stack.approver, 'POST', `/v1/approvals/${held.id}/approve`);
      // Earlier decisions of this file may be delivered too: this endpoint now gets them all.
      const ours = () =>
        receiver.deliveries.filter((d) => d.headers['webhook-id'] === `evt_${held.id}`);
      await eventually('approval.decided delivered', () => (ours().length > 0 ? true : null));
      // A second delivery of the one event would have come by now (it is not a retry).
      await sleep(300);
      expect(ours()).toHaveLength(1);
      const [delivery] = ours();
      const payload = new Webhook(secret).verify(delivery?.body ?? '', delivery?.headers ?? {}) as {
        type: string;
        data: { approval: { id: string; status: string; decided_by: string } };
      };
      expect(payload.type).toBe('approval.decided');
      expect(payload.data.approval).toMatchObject({
        id: held.id,
        status: 'approved',
        decided_by: 'approver',
      });
    } finally {
      await stack.request(stack.key, 'DELETE', '/v1/webhook-endpoint');
      await receiver.close();
    }
  });
});

describe('the retry window after approval', () => {
  it('lapses: a call retried too late is asked anew and the approval is never used', async () => {
    const brief = await startCallStack({ env: { APPROVED_RETRY_WINDOW_SECONDS: '1' } });
    try {
      await brief.connect('u_late');
      const input = { title: 'retried too late' };
      const held = approvalOf(await brief.run('acme.create_task', { user: 'u_late', input }));
      const approved = await brief.request(
        brief.approver,
        'POST',
        `/v1/approvals/${held.id}/approve`,
      );
      expect(approved.status).toBe(200);
      // The window lapses when the workflow's timer fires, which a loaded machine fires late:
      // the workflow that held the call has ended then, and a retry starts anew.
      const [holder] = await brief.db.sql<{ workflowId: string }[]>`
        select workflow_id from approvals where id = ${held.id}`;
      await brief.api.temporal.workflow.getHandle(holder?.workflowId ?? '').result();
      const before = brief.acme.demo.stats().apiRequests;
      const late = approvalOf(await brief.run('acme.create_task', { user: 'u_late', input }));
      expect(late.id).not.toBe(held.id);
      expect(brief.acme.demo.stats().apiRequests).toBe(before);
      const [row] = await brief.db.sql<{ status: string; consumedAt: Date | null }[]>`
        select status, consumed_at from approvals where id = ${held.id}`;
      expect(row).toEqual({ status: 'approved', consumedAt: null });
    } finally {
      await brief.stop();
    }
  });
});

describe('deleting the user', () => {
  it('cancels their pending approvals', async () => {
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_gus', input: { title: 'orphan' } }),
    );
    const deleted = await stack.request(stack.key, 'DELETE', '/v1/users/u_gus');
    expect(deleted.status).toBe(200);
    await eventually('the approval cancelled', async () => {
      const [row] = await stack.db.sql<{ status: string }[]>`
        select status from approvals where id = ${held.id} and status = 'cancelled'`;
      return row;
    });
    const late = await stack.request(stack.approver, 'POST', `/v1/approvals/${held.id}/approve`);
    expect(late.status).toBe(409);
  });
});

describe('four eyes', () => {
  const decisionPaths = (id: string) =>
    [
      ['POST', `/v1/approvals/${id}/approve`, undefined],
      ['POST', `/v1/approvals/${id}/reject`, undefined],
      ['POST', `/v1/approvals/${id}/decision`, { decision: 'approve' }],
      ['POST', `/v1/approvals/${id}/decision`, { decision: 'deny' }],
    ] as const;

  it('the agent whose call is held cannot decide it on any path, even with a full key', async () => {
    await stack.connect('u_self');
    const input = { title: `self-approved ${String(Date.now())}` };
    const held = approvalOf(await stack.run('acme.create_task', { user: 'u_self', input }));
    for (const [method, path, body] of decisionPaths(held.id)) {
      const answer = await stack.request(stack.key, method, path, body ? { body } : {});
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 'insufficient_access', retryable: false });
      expect((answer.body.error as { message: string }).message).toMatch(
        /"test-agent" made the held call.*never decide its own approval/,
      );
    }
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${held.id}`);
    expect(view.body).toMatchObject({ status: 'pending', decided_by: null });
    // Still held: the retry does not run.
    expect(codeOf(await stack.run('acme.create_task', { user: 'u_self', input }))).toBe(
      'approval_required',
    );
    expect(await titles('u_self')).not.toContain(input.title);
  });

  it('when requested_from is set, only a decider it names may decide, on every path', async () => {
    await stack.connect('u_named');
    const input = { title: `named ${String(Date.now())}` };
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_named', input }, { key: named }),
    );
    expect(held.requested_from).toEqual(['ops@example.com']);
    for (const key of [stack.approver, business, stack.key]) {
      for (const [method, path, body] of decisionPaths(held.id)) {
        const answer = await stack.request(key, method, path, body ? { body } : {});
        expect(answer.status).toBe(403);
        expect(codeOf(answer)).toBe('insufficient_access');
        expect((answer.body.error as { message: string }).message).toContain(
          'requested from "ops@example.com"',
        );
      }
    }
    const approved = await stack.request(ops, 'POST', `/v1/approvals/${held.id}/approve`);
    expect(approved.body).toEqual({
      id: held.id,
      status: 'approved',
      decided_by: 'ops@example.com',
    });
    const ran = await stack.run('acme.create_task', { user: 'u_named', input }, { key: named });
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
  });

  it('the workflow itself refuses a decider the rules refuse, whatever sent the Update', async () => {
    await stack.connect('u_direct');
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_direct', input: { title: 'direct' } }),
    );
    const [row] = await stack.db.sql<{ workflowId: string }[]>`
      select workflow_id from approvals where id = ${held.id}`;
    const handle = stack.api.temporal.workflow.getHandle(row?.workflowId ?? '');
    const refusal = await handle
      .executeUpdate('decide', {
        args: [{ approvalId: held.id, decision: 'approve', decidedBy: 'test-agent' }],
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refusal).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refusal as WorkflowUpdateFailedError).cause).toMatchObject({
      type: 'DeciderRefused',
      message: expect.stringMatching(/never decide its own approval/),
    });
    const [after] = await stack.db.sql<{ status: string }[]>`
      select status from approvals where id = ${held.id}`;
    expect(after?.status).toBe('pending');
  });
});

describe('what an approver sees', () => {
  it('the record names the policy version and the rule that asked', async () => {
    await stack.connect('u_rule');
    const held = approvalOf(
      await stack.run('acme.create_task', { user: 'u_rule', input: { title: 'which rule' } }),
    );
    const view = await stack.request(stack.approver, 'GET', `/v1/approvals/${held.id}`);
    expect(view.body).toMatchObject({
      agent_id: 'test-agent',
      user: 'u_rule',
      action: 'acme.create_task',
      scope: 'write',
      created_at: expect.any(String),
      policy: { id: 'default', version: expect.any(Number), rule: 'defaults.write' },
      request: { action: 'acme.create_task', input: { title: 'which rule' } },
    });
  });

  it('GET /v1/approvals lists newest first, with filters and a cursor', async () => {
    await stack.connect('u_inbox');
    const titlesAsked = ['inbox 1', 'inbox 2', 'inbox 3'];
    const ids: string[] = [];
    for (const title of titlesAsked) {
      ids.push(
        approvalOf(await stack.run('acme.create_task', { user: 'u_inbox', input: { title } })).id,
      );
    }
    const namedHeld = approvalOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_inbox', input: { title: 'inbox named' } },
        { key: named },
      ),
    );
    await stack.request(stack.approver, 'POST', `/v1/approvals/${ids[0] ?? ''}/reject`);

    const list = async (query: string, key: TestKey = stack.approver) => {
      const answer = await stack.request(key, 'GET', `/v1/approvals?${query}`);
      expect(answer.status).toBe(200);
      return answer.body as { data: { id: string; status: string }[]; cursor: string | null };
    };
    const all = await list('user=u_inbox');
    expect(all.data.map((a) => a.id)).toEqual([namedHeld.id, ...[...ids].reverse()]);
    expect((await list('user=u_inbox&status=pending')).data.map((a) => a.id)).toEqual([
      namedHeld.id,
      ids[2],
      ids[1],
    ]);
    expect((await list('user=u_inbox&status=rejected')).data.map((a) => a.id)).toEqual([ids[0]]);
    expect(
      (await list('user=u_inbox&requested_from=ops%40example.com')).data.map((a) => a.id),
    ).toEqual([namedHeld.id]);
    expect((await list('user=u_inbox&agent=named-bot')).data.map((a) => a.id)).toEqual([
      namedHeld.id,
    ]);
    expect((await list('action=acme.delete_task&user=u_inbox')).data).toEqual([]);
    expect((await list('user=u_inbox&action=acme.create_task')).data).toHaveLength(4);

    const first = await list('user=u_inbox&limit=3');
    expect(first.data).toHaveLength(3);
    expect(first.cursor).toEqual(expect.any(String));
    const second = await list(`user=u_inbox&limit=3&cursor=${first.cursor ?? ''}`);
    expect(second.data.map((a) => a.id)).toEqual([ids[0]]);
    expect(second.cursor).toBeNull();

    // A business key gets the management shape; a key without approvals:read is refused.
    const managed = await stack.request(business, 'GET', '/v1/approvals?user=u_inbox&limit=1');
    expect(managed.body).toMatchObject({
      data: [{ id: namedHeld.id }],
      nextCursor: expect.any(String),
    });
    const refused = await stack.request(
      await createTestKey(stack.db.sql, { env: 'test', access: 'full', scopes: [] }),
      'GET',
      '/v1/approvals',
    );
    expect(refused.status).toBe(403);
    expect(codeOf(refused)).toBe('insufficient_access');
    const bad = await stack.request(stack.approver, 'GET', '/v1/approvals?status=maybe');
    expect(bad.status).toBe(400);
    expect(issuePaths(bad)).toEqual(['status']);
  });

  it('an expired approval is listed as expired, not pending', async () => {
    await stack.connect('u_lapsed');
    const held = approvalOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_lapsed', input: { title: 'lapsed' } },
        { key: quick },
      ),
    );
    await sleep(Math.max(0, Date.parse(held.expires_at) - Date.now()) + 300);
    const pending = await stack.request(
      stack.approver,
      'GET',
      '/v1/approvals?user=u_lapsed&status=pending',
    );
    expect(pending.body.data).toEqual([]);
    const expired = await stack.request(
      stack.approver,
      'GET',
      '/v1/approvals?user=u_lapsed&status=expired',
    );
    expect(expired.body.data).toMatchObject([{ id: held.id, status: 'expired' }]);
  });
});
