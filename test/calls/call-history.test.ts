/**
 * The shape of a call's history: what each call costs Temporal, asserted on the
 * histories themselves. An allowed read is one local activity; an approval's webhook is started
 * from a local activity, so the approved retry meets no failed workflow task.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { receiveWebhooks, type Receiver } from '../support/webhook-receiver.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

const EventType = temporal.api.enums.v1.EventType;

let stack: CallStack;
/** Approval webhooks are delivered only to an environment with an endpoint: this one has one. */
let receiver: Receiver;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_history');
  ({ receiver } = await receiveWebhooks(stack));
  started.add(receiver);
});

async function callWorkflowOf(client: Client, user: string, action: string): Promise<string> {
  const query = `WorkflowType = 'governedCall' AND GatehouseUser = '${user}' AND GatehouseAction = '${action}'`;
  // Visibility is eventually consistent.
  return eventually(
    `the call workflow of ${user} ${action}`,
    async () => {
      for await (const execution of client.workflow.list({ query })) return execution.workflowId;
      return null;
    },
    250,
  );
}

interface HistorySummary {
  events: number;
  localActivities: number;
  activities: number;
  children: number;
  failedTasks: number;
}

async function summary(client: Client, workflowId: string): Promise<HistorySummary> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const count = (type: temporal.api.enums.v1.EventType) =>
    events.filter((event) => event.eventType === type).length;
  return {
    events: events.length,
    localActivities: events.filter(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED &&
        event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length,
    activities: count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    children: count(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED),
    failedTasks: count(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED),
  };
}

describe('what a call costs Temporal', () => {
  it('an allowed read is prepared, served and audited in one local activity', async () => {
    const answer = await stack.run('acme.list_tasks', { user: 'u_history', input: {} });
    expect(answer.status).toBe(200);
    const workflowId = await callWorkflowOf(stack.api.temporal, 'u_history', 'acme.list_tasks');
    await stack.api.temporal.workflow.getHandle(workflowId).result();
    const shape = await summary(stack.api.temporal, workflowId);
    expect(shape).toMatchObject({ localActivities: 1, activities: 0, children: 0, failedTasks: 0 });
    // Started, task ×3, Update accepted, the patch and the activity's markers, the decision
    // attribute, Update completed, completed.
    expect(shape.events).toBeLessThanOrEqual(11);
    const rows = await stack.db.sql`
      select decision from audit_events
      where user_external_id = 'u_history' and action = 'acme.list_tasks'`;
    expect(rows.map((row) => row.decision as string)).toEqual(['allowed']);
  });

  it("records the connection's last use at most once a minute", async () => {
    const lastUse = async () => {
      const [row]: [{ lastUsedAt: Date | null }?] = await stack.db.sql`
        select c.last_used_at from connections c
        join connected_users u on u.id = c.connected_user_id
        where u.external_id = 'u_history' and c.status = 'active'`;
      return row?.lastUsedAt ?? null;
    };
    expect((await stack.run('acme.list_tasks', { user: 'u_history', input: {} })).status).toBe(200);
    const first = await lastUse();
    expect(first).toBeInstanceOf(Date);
    expect(
      (await stack.run('acme.list_tasks', { user: 'u_history', input: { status: 'done' } })).status,
    ).toBe(200);
    expect(await lastUse()).toEqual(first);
    // A use older than a minute is recorded anew.
    await stack.db.sql`
      update connections set last_used_at = now() - interval '2 minutes'
      where connected_user_id = (select id from connected_users where external_id = 'u_history')`;
    const stale = await lastUse();
    expect((await stack.run('acme.list_tasks', { user: 'u_history', input: {} })).status).toBe(200);
    expect((await lastUse())?.getTime()).toBeGreaterThan(stale?.getTime() ?? Infinity);
  });

  it('an allowed proxy read takes the same single step', async () => {
    const answer = await stack.request(stack.key, 'GET', '/v1/proxy/acme/tasks', {
      headers: { 'service-user': 'u_history' },
    });
    expect(answer.status).toBe(200);
    const workflowId = await callWorkflowOf(stack.api.temporal, 'u_history', 'acme.proxy');
    await stack.api.temporal.workflow.getHandle(workflowId).result();
    expect(await summary(stack.api.temporal, workflowId)).toMatchObject({
      localActivities: 1,
      activities: 0,
    });
  });

  it('a read whose first attempt the app cuts off is tried again whole and audited once', async () => {
    const before = stack.acme.demo.stats().apiRequests;
    stack.acme.demo.faults.set({ mode: 'cut_off', times: 1 });
    try {
      const answer = await stack.run('acme.list_tasks', {
        user: 'u_history',
        input: { status: 'open' },
      });
      expect(answer.status).toBe(200);
      expect(stack.acme.demo.stats().apiRequests - before).toBe(2);
      const rows = await stack.db.sql`
        select decision from audit_events
        where user_external_id = 'u_history' and request -> 'input' ->> 'status' = 'open'`;
      expect(rows.map((row) => row.decision as string)).toEqual(['allowed']);
    } finally {
      stack.acme.demo.faults.reset();
    }
  });

  it('an approved write runs once, its webhooks started without a child or a failed task', async () => {
    const input = { title: `history ${String(Date.now())}` };
    const held = await stack.run('acme.create_task', { user: 'u_history', input });
    expect(held.status).toBe(403);
    const approvalId = (held.body.error as { approval: { id: string } }).approval.id;
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.status).toBe(200);
    const ran = await stack.run('acme.create_task', { user: 'u_history', input });
    expect(ran.status).toBe(200);

    const [approval]: [{ workflowId: string }?] = await stack.db.sql`
      select workflow_id from approvals where id = ${approvalId}`;
    const workflowId = approval?.workflowId ?? '';
    await stack.api.temporal.workflow.getHandle(workflowId).result();
    const shape = await summary(stack.api.temporal, workflowId);
    expect(shape.failedTasks).toBe(0);
    // Both deliveries are started from local activities, not child workflows.
    expect(shape.children).toBe(0);
    for (const [kind, type] of [
      ['approval.requested', 'approvalRequestedWebhook'],
      ['approval.decided', 'approvalDecidedWebhook'],
    ]) {
      const delivery = await stack.api.temporal.workflow
        .getHandle(`webhook/${kind}/${approvalId}`)
        .describe();
      expect(delivery.type).toBe(type);
    }
  });
});
