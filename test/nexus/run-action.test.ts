import { beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { encryptedDataConverter } from '../../infra/temporal/payload-codec.js';
import { gatehouseFailure } from '../../workflows/nexus/gatehouse-failure.js';
import type { RunActionResult } from '../../workflows/nexus/gatehouse-service.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { historyText, storedPayloads } from '../support/workflow-history.js';
import { startCallerStack, type CallerStack } from './caller-stack.js';
import { failureOf, operationFixture } from './operation-fixture.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

/**
 * README "Call Gatehouse from your Temporal workflows (Nexus)": a backend's workflow
 * in its own namespace runs a held action through a Nexus endpoint, with its API key in the
 * operation's headers, and receives the app's answer once a person approves; the call runs
 * once, survives both sides' workers being replaced, and never runs if the caller cancels first.
 */

const USER = 'u_nexus';
const AGENT = 'nexus-backend';

let stack: CallStack;
let seeded: SeededConnection;
/** The backend's key: standard access, as an agent's should be. */
let backendKey: TestKey;
let caller: CallerStack;
/** Reads Gatehouse's own histories, through its codec. */
let gatehouse: Client;
let fixture: ReturnType<typeof operationFixture>;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  seeded = await stack.connect(USER);
  backendKey = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: AGENT,
  });
  caller = started.add(await startCallerStack(stack.config, backendKey.key));
  gatehouse = new Client({
    connection: await Connection.connect({ address: stack.config.temporal.address }),
    namespace: stack.config.temporal.namespace,
    dataConverter: encryptedDataConverter(stack.config.encryption),
  });
  started.push(() => gatehouse.connection.close());
  fixture = operationFixture(stack, seeded, AGENT);
}, 120_000);

/** The Gatehouse workflow behind the operation, found as an operator would, by its agent. */
async function backingWorkflowIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of gatehouse.workflow.list({
    query: `WorkflowType = 'nexusRunAction' AND GatehouseAgent = '${AGENT}'`,
  })) {
    ids.push(execution.workflowId);
  }
  return ids;
}

describe('gatehouse.runAction through a Nexus endpoint', () => {
  it('runs a held action for a workflow of another namespace once approved, exactly once', async () => {
    const title = `Nexus ${randomBytes(4).toString('hex')}`;
    const handle = await fixture.startCaller({ title }, caller);
    const approval = await fixture.pendingApprovalFor(title);
    expect(approval.agent_id).toBe(AGENT);
    expect(await fixture.tasksAtTheApp(title)).toBe(0);

    // Four eyes as for REST: the backend's own key may not decide its call.
    const own = await stack.request(backendKey, 'POST', `/v1/approvals/${approval.id}/approve`);
    expect(own.status).toBe(403);
    const decided = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approval.id}/approve`,
    );
    expect(decided.status).toBe(200);

    const result = (await handle.result()) as RunActionResult;
    expect(result.ok).toBe(true);
    expect(result.data).toMatchObject({ title });
    expect(await fixture.tasksAtTheApp(title)).toBe(1);

    const audited = await stack.db.sql<
      { id: string; decision: string; approvalId: string | null }[]
    >`
      select id, decision, approval_id from audit_events
      where agent_id = ${AGENT} and request->'input'->>'title' = ${title} order by id`;
    expect(audited.map((row) => row.decision)).toEqual(['blocked', 'allowed']);
    expect(audited.every((row) => row.approvalId === approval.id)).toBe(true);

    // The key is in no history of Gatehouse's, decoded or not: the backing workflow's, the call's.
    const [backing] = await backingWorkflowIds();
    expect(backing).toMatch(/^nexus\/test\//);
    const [call] = await stack.db.sql<{ workflowId: string }[]>`
      select workflow_id from approvals where id = ${approval.id}`;
    // The call a Nexus operation started links its first request's audit event in
    // the Temporal UI, as a REST call does.
    const details = await (
      await gatehouse.workflow.getHandle(call?.workflowId ?? '').describe()
    ).staticDetails();
    expect(details).toContain(`- audit event: [${audited[0]?.id ?? '-'}](`);
    expect(details).toContain(`/v1/audit/${audited[0]?.id ?? '-'})`);
    for (const workflowId of [backing ?? '', call?.workflowId ?? '']) {
      const text = await historyText(gatehouse, workflowId);
      expect(text).not.toContain(backendKey.key);
      expect(text).not.toContain(backendKey.key.slice(-32));
      const stored = JSON.stringify(await storedPayloads(gatehouse, workflowId));
      expect(stored).not.toContain(backendKey.key);
    }
    // What stays clear in the backing workflow is the answer the caller receives, its summary and
    // search attributes (never codec payloads), nothing else: its input is sealed.
    const sealed = await storedPayloads(gatehouse, backing ?? '');
    const clear = sealed
      .filter(
        (payload) => Buffer.from(payload.metadata?.encoding ?? []).toString() === 'json/plain',
      )
      .filter((payload) => payload.metadata?.type === undefined)
      .map((payload) => Buffer.from(payload.data ?? []).toString());
    expect(clear.some((text) => text.includes('"ok":true'))).toBe(true);
    const summary = `"acme.create_task for user ${USER}, agent ${AGENT}"`;
    // The W3C trace context the OpenTelemetry interceptors carry in Temporal headers (issue
    // 25.3) is clear too: ids only, no secret.
    const traceContext = (text: string) =>
      /^\{"traceparent":"[0-9a-f-]+"(,"tracestate":"[^"]*")?\}$/.test(text);
    expect(
      clear.filter((text) => !text.includes('"ok"') && text !== summary && !traceContext(text)),
    ).toEqual([]);
  });

  it('completes after the caller’s worker and Gatehouse’s worker were both replaced', async () => {
    const title = `Nexus restart ${randomBytes(4).toString('hex')}`;
    const handle = await fixture.startCaller({ title }, caller);
    const approval = await fixture.pendingApprovalFor(title);
    await Promise.all([caller.restartWorker(), stack.restartWorker()]);

    const decided = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approval.id}/approve`,
    );
    expect(decided.status).toBe(200);
    const result = (await handle.result()) as RunActionResult;
    expect(result).toMatchObject({ ok: true, data: { title } });
    expect(await fixture.tasksAtTheApp(title)).toBe(1);
  });

  it('never runs the call when the caller cancels before the decision', async () => {
    const title = `Nexus cancel ${randomBytes(4).toString('hex')}`;
    const handle = await fixture.startCaller({ title }, caller);
    const approval = await fixture.pendingApprovalFor(title);

    await handle.cancel();
    const error = await handle.result().then(
      () => null,
      (failed: unknown) => failed,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);

    // The approval is cancelled at once, so a late approval cannot run the call.
    await eventually('the approval cancelled', async () =>
      (await fixture.approvalStatus(approval.id)) === 'cancelled' ? true : null,
    );
    const late = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approval.id}/approve`,
    );
    expect(late.status).toBe(409);
    await sleep(1000);
    expect(await fixture.tasksAtTheApp(title)).toBe(0);

    const [row] = await stack.db.sql<{ decision: string; reason: string }[]>`
      select decision, reason from audit_events
      where approval_id = ${approval.id} and reason like 'cancelled:%'`;
    expect(row?.decision).toBe('denied');
    expect(row?.reason).toContain('the call did not run');
  });

  it('fails invalid_request with the REST error envelope for input the action refuses', async () => {
    const handle = await fixture.startCaller({ title: '' }, caller);
    const cause = await failureOf(handle);
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).nonRetryable).toBe(true);
    expect(gatehouseFailure(cause)).toMatchObject({
      code: 'invalid_request',
      error: { code: 'invalid_request', issues: [{ path: 'input.title' }] },
    });
  });

  it('fails invalid_api_key for a key Gatehouse does not know', async () => {
    const stranger = await startCallerStack(stack.config, `gk_test_${'x'.repeat(32)}`);
    try {
      const handle = await fixture.startCaller({ title: 'never' }, stranger);
      const failure = gatehouseFailure(await failureOf(handle));
      expect(failure?.code).toBe('invalid_api_key');
      expect(failure?.message).not.toContain('gk_test_');
    } finally {
      await stranger.stop();
    }
  });
});
