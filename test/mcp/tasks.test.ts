import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { APPROVAL_PAGE_PATH } from '../../activities/approvals/link-token.js';
import { revokeApiKey } from '../../activities/db/api-keys.js';
import { abandonMcpTask } from '../../activities/db/mcp-tasks.js';
import { mcpTaskResultsWaiting } from '../../infra/telemetry/metrics.js';
import { startServiceProcess } from '../support/service-process.js';
import { eventually } from '../support/eventually.js';
import { startArgumentOf } from '../support/workflow-history.js';
import {
  MCP_TASK_WORKFLOW,
  mcpTaskWorkflowId,
  type McpTaskStart,
} from '../../workflows/mcp-task-types.js';
import { randomUUID } from 'node:crypto';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';
import { connectMcp, errorOf, mintSession, type TestMcpClient } from './mcp-client.js';

let stack: CallStack;
const started = stopsAfterAll();

/** JSON-RPC's code for a request the server stopped waiting on. */
const REQUEST_TIMEOUT: number = ErrorCode.RequestTimeout;

/** What a task's result request waits at most here (MCP_TASK_RESULT_WAIT_SECONDS). */
const RESULT_WAIT_SECONDS = 5;

beforeAll(async () => {
  stack = started.add(
    await startCallStack({
      env: {
        MCP_TASK_POLL_INTERVAL_MS: '200',
        MCP_TASK_RESULT_WAIT_SECONDS: String(RESULT_WAIT_SECONDS),
      },
    }),
  );
  for (const user of [
    't_ann',
    't_ben',
    't_cat',
    't_dan',
    't_eve',
    't_fay',
    't_gus',
    't_hal',
    't_ivy',
  ]) {
    await stack.connect(user);
  }
});

const clients: TestMcpClient[] = [];
afterAll(async () => {
  for (const mcp of clients) await mcp.close().catch(() => undefined);
});

/** An SDK client on a fresh session for `user` (on `api`, the stack's by default). */
async function sessionClient(
  user: string,
  options: { key?: TestKey; api?: { url: string } } = {},
): Promise<TestMcpClient> {
  const session = await mintSession(stack, { user }, options.key ?? stack.key);
  const address = new URL(session.address.pathname, (options.api ?? stack.api).url);
  const mcp = await connectMcp(address);
  clients.push(mcp);
  return mcp;
}

/** A task-augmented tools/call, as the SDK's task-aware clients send it. */
async function callAsTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ task: Task; meta: Record<string, unknown> | undefined }> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return { task: created.task, meta: created._meta };
}

/** How many tasks/result requests the API processes of this test hold open now. */
async function waitingResults(): Promise<number> {
  const metric = await mcpTaskResultsWaiting.get();
  return metric.values[0]?.value ?? 0;
}

async function titles(user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

async function approvalOf(taskId: string): Promise<string> {
  const [row] = await stack.db.sql<{ approvalId: string }[]>`
    select approval_id from mcp_tasks where id = ${taskId}`;
  if (!row) throw new Error(`no task ${taskId}`);
  return row.approvalId;
}

async function decide(approvalId: string, decision: 'approve' | 'reject'): Promise<void> {
  const answer = await stack.request(
    stack.approver,
    'POST',
    `/v1/approvals/${approvalId}/${decision}`,
  );
  expect(answer.status).toBe(200);
}

/**
 * The task's result, asking again whenever the server answers that it still works (it holds
 * one request at most RESULT_WAIT_SECONDS): what a client does, and no bound raced.
 */
async function resultOf(client: Client, taskId: string): Promise<CallToolResult> {
  for (;;) {
    try {
      return await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    } catch (error) {
      if (error instanceof McpError && error.code === REQUEST_TIMEOUT) continue;
      throw error;
    }
  }
}

/** Polls tasks/get, at the task's pollInterval, until the task has ended. */
async function ended(client: Client, taskId: string): Promise<Task> {
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status !== 'working') return task;
    await new Promise((resolve) => setTimeout(resolve, task.pollInterval ?? 200));
  }
}

async function refusal(attempt: Promise<unknown>): Promise<McpError> {
  try {
    await attempt;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error(`expected a JSON-RPC error, got ${JSON.stringify(await attempt)}`);
}

describe('the server speaks MCP tasks', () => {
  it('advertises tasks for tools/call, list and cancel, and every tool may be called as a task', async () => {
    const mcp = await sessionClient('t_ann');
    expect(mcp.client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await mcp.listAll();
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) expect(tool.execution).toEqual({ taskSupport: 'optional' });
  });

  it('an allowed call made as a task is a task that has ended with the app’s answer', async () => {
    const mcp = await sessionClient('t_ann');
    const { task } = await callAsTask(mcp.client, 'acme__list_tasks', {});
    expect(task.status).toBe('working');
    const now = await mcp.client.experimental.tasks.getTask(task.taskId);
    expect(now).toMatchObject({ taskId: task.taskId, status: 'completed' });
    const result = await resultOf(mcp.client, task.taskId);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ ok: true, data: { tasks: [] } });
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
  });
});

describe('a held call is a task', () => {
  it('held → approved → completed: the SDK’s task stream gets the app’s answer, the write runs once', async () => {
    const mcp = await sessionClient('t_ben');
    const title = `task ${String(Date.now())}`;
    const stream = mcp.client.experimental.tasks.callToolStream(
      { name: 'acme__create_task', arguments: { title } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    const seen: string[] = [];
    let result: CallToolResult | null = null;
    let approved = false;
    for await (const message of stream) {
      seen.push(message.type);
      if (message.type === 'taskCreated') {
        const { task } = message;
        expect(task.status).toBe('working');
        expect(task.statusMessage).toMatch(
          /^Held for approval [0-9a-f-]{36}: any person who may decide approvals, not this agent, decides it, until \d{4}-/,
        );
        expect(JSON.stringify(task)).not.toContain(APPROVAL_PAGE_PATH);
      }
      if (message.type === 'taskStatus' && !approved) {
        expect(message.task.status).toBe('working');
        expect(await titles('t_ben')).not.toContain(title);
        await decide(await approvalOf(message.task.taskId), 'approve');
        approved = true;
      }
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(seen[0]).toBe('taskCreated');
    expect(seen.at(-1)).toBe('result');
    expect(result?.isError).toBeUndefined();
    expect(result?.structuredContent).toMatchObject({ ok: true, data: { title } });
    expect((await titles('t_ben')).filter((one) => one === title)).toHaveLength(1);
    // One run reached the app, through MCP: the held request, then the task's run.
    const audit = await stack.db.sql<{ decision: string; via: string }[]>`
      select decision, via from audit_events
      where user_external_id = 't_ben' and action = 'acme.create_task' order by id`;
    expect(audit.map((row) => [row.decision, row.via])).toEqual([
      ['blocked', 'mcp'],
      ['allowed', 'mcp'],
    ]);
  });

  it('the client is told what to tell its model, and the result waits in tasks/result for the decision', async () => {
    const mcp = await sessionClient('t_cat');
    const title = `awaited ${String(Date.now())}`;
    const statuses: Task[] = [];
    mcp.client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      statuses.push(notification.params);
    });
    const { task, meta } = await callAsTask(mcp.client, 'acme__create_task', { title });
    expect(String(meta?.['io.modelcontextprotocol/model-immediate-response'])).toMatch(
      /^acme\.create_task: Held for approval .* Do not call it again/,
    );
    // Waiting already when the person approves: the answer comes with the decision's run, and
    // the task's end is announced on the waiting request's stream first.
    const waitingBefore = await waitingResults();
    const waiting = resultOf(mcp.client, task.taskId);
    await eventually('the result request waits', async () =>
      (await waitingResults()) > waitingBefore ? true : null,
    );
    await decide(await approvalOf(task.taskId), 'approve');
    const result = await waiting;
    expect(statuses.map((status) => [status.taskId, status.status])).toEqual([
      [task.taskId, 'completed'],
    ]);
    expect(result.structuredContent).toMatchObject({ ok: true, data: { title } });
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    const done = await mcp.client.experimental.tasks.getTask(task.taskId);
    expect(done).toMatchObject({ status: 'completed' });
    expect(done.pollInterval).toBeUndefined();
    // Asked again: the same answer, and the app still has one task of that title.
    expect((await resultOf(mcp.client, task.taskId)).structuredContent).toEqual(
      result.structuredContent,
    );
    expect((await titles('t_cat')).filter((one) => one === title)).toHaveLength(1);
  });

  it('rejected: the task fails with the reason, and tasks/result is the denial a plain call gets', async () => {
    const mcp = await sessionClient('t_dan');
    const before = stack.acme.demo.stats().apiRequests;
    const { task } = await callAsTask(mcp.client, 'acme__create_task', { title: 'rejected' });
    const approvalId = await approvalOf(task.taskId);
    await decide(approvalId, 'reject');
    const failed = await ended(mcp.client, task.taskId);
    expect(failed.status).toBe('failed');
    expect(failed.statusMessage).toContain(approvalId);
    expect(failed.statusMessage).toMatch(/rejected/i);
    const result = await resultOf(mcp.client, task.taskId);
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'denied_by_policy' });
    expect(stack.acme.demo.stats().apiRequests).toBe(before);
  });

  it('expired: the task fails approval_expired, and the call never ran', async () => {
    await stack.setDefaults(
      { read: 'allow', write: 'ask', destructive: 'deny' },
      { approval: { ttl_seconds: 2 } },
    );
    try {
      const mcp = await sessionClient('t_eve');
      const before = stack.acme.demo.stats().apiRequests;
      const { task } = await callAsTask(mcp.client, 'acme__create_task', { title: 'lapsed' });
      const approvalId = await approvalOf(task.taskId);
      const failed = await ended(mcp.client, task.taskId);
      expect(failed).toMatchObject({ status: 'failed' });
      expect(failed.statusMessage).toMatch(
        new RegExp(
          `^Approval ${approvalId} was not decided before it expired at .*; the call did not run\\.$`,
        ),
      );
      const result = await resultOf(mcp.client, task.taskId);
      expect(errorOf(result)).toMatchObject({
        code: 'approval_expired',
        approval: { id: approvalId, status: 'expired' },
      });
      expect(stack.acme.demo.stats().apiRequests).toBe(before);
    } finally {
      await stack.setDefaults(
        { read: 'allow', write: 'ask', destructive: 'deny' },
        { approval: { ttl_seconds: 86_400 } },
      );
    }
  });

  it('tasks/cancel withdraws a pending approval: cancelled, audited, and nobody can approve it after', async () => {
    const mcp = await sessionClient('t_fay');
    const { task } = await callAsTask(mcp.client, 'acme__create_task', { title: 'withdrawn' });
    const approvalId = await approvalOf(task.taskId);
    const cancelled = await mcp.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(cancelled.statusMessage).toMatch(/cancelled by the agent/i);
    const approve = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approve.status).toBe(409);
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
    expect(view.body).toMatchObject({ status: 'cancelled' });
    const [audit] = await stack.db.sql<{ decision: string; reason: string; via: string }[]>`
      select decision, reason, via from audit_events
      where approval_id = ${approvalId} and reason like 'cancelled:%'`;
    expect(audit).toMatchObject({ decision: 'denied', via: 'mcp' });
    expect(audit?.reason).toContain(task.taskId);
    expect(errorOf(await resultOf(mcp.client, task.taskId))).toMatchObject({
      code: 'approval_cancelled',
      approval: { id: approvalId, status: 'cancelled' },
    });
    // An ended task cannot be cancelled again (the protocol's -32602).
    const again = await refusal(mcp.client.experimental.tasks.cancelTask(task.taskId));
    expect(again.code).toBe(ErrorCode.InvalidParams);
    expect(await titles('t_fay')).not.toContain('withdrawn');
  });

  it('a task whose workflow the API gave up starting runs nothing when that start lands late, even approved', async () => {
    const mcp = await sessionClient('t_ivy');
    const title = `given up ${String(Date.now())}`;
    const { task } = await callAsTask(mcp.client, 'acme__create_task', { title });
    const approvalId = await approvalOf(task.taskId);
    const temporal = stack.api.temporal;
    const live = mcpTaskWorkflowId('test', task.taskId);
    // The live task's workflow stamped its row as it began: the API cannot give that task up.
    await eventually('the task stamped as started', async () => {
      const [row] = await stack.db.sql<{ startedAt: Date | null }[]>`
        select started_at from mcp_tasks where id = ${task.taskId}`;
      return row?.startedAt ?? undefined;
    });
    expect(await abandonMcpTask(stack.db.sql, task.taskId)).toBe(false);

    // The same start for a task the API deleted when its start deadline passed: Temporal took
    // it after all. The live workflow is stopped, so only the late one could run the call.
    const start = (await startArgumentOf(temporal, live)) as McpTaskStart;
    await temporal.workflow.getHandle(live).terminate('replaced by a late start in a test');
    const givenUp = randomUUID();
    const late = await temporal.workflow.start(MCP_TASK_WORKFLOW, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: mcpTaskWorkflowId('test', givenUp),
      args: [{ ...start, taskId: givenUp }],
    });
    await decide(approvalId, 'approve');
    await late.result();
    const [audit] = await stack.db.sql<{ count: number }[]>`
      select count(*)::int as count from audit_events
      where approval_id = ${approvalId} and decision = 'allowed'`;
    expect(audit?.count).toBe(0);
    expect(await titles('t_ivy')).not.toContain(title);
  });

  it('tasks/cancel after the approval is refused, and the approved call runs once', async () => {
    const mcp = await sessionClient('t_gus');
    const title = `kept ${String(Date.now())}`;
    const { task } = await callAsTask(mcp.client, 'acme__create_task', { title });
    await decide(await approvalOf(task.taskId), 'approve');
    const refused = await refusal(mcp.client.experimental.tasks.cancelTask(task.taskId));
    expect(refused.code).toBe(ErrorCode.InvalidParams);
    const result = await resultOf(mcp.client, task.taskId);
    expect(result.structuredContent).toMatchObject({ ok: true, data: { title } });
    expect((await titles('t_gus')).filter((one) => one === title)).toHaveLength(1);
  });
});

describe('a task whose key is revoked while it waits', () => {
  it('does not run the approved call: the task fails, and the app gets nothing', async () => {
    // A key of its own: revoking it must not touch the other tests' caller.
    const key = await createTestKey(stack.db.sql, { access: 'standard', agentId: 'task-revoked' });
    const mcp = await sessionClient('t_dan', { key });
    const title = `revoked ${String(Date.now())}`;
    const { task } = await callAsTask(mcp.client, 'acme__create_task', { title });
    expect(await revokeApiKey(stack.db.sql, key.id)).toBe(true);
    await decide(await approvalOf(task.taskId), 'approve');
    const ended = await eventually('the task ends', async () => {
      const [row] = await stack.db.sql<{ status: string; statusMessage: string }[]>`
        select status, status_message from mcp_tasks where id = ${task.taskId}`;
      return row?.status === 'working' ? null : row;
    });
    expect(ended).toMatchObject({ status: 'failed' });
    expect(ended.statusMessage).toMatch(/revoked/);
    expect(ended.statusMessage).not.toContain(key.key);
    expect(await titles('t_dan')).not.toContain(title);
  });
});

describe('whose task it is', () => {
  let taskId: string;
  let owner: TestMcpClient;

  beforeAll(async () => {
    owner = await sessionClient('t_hal');
    ({
      task: { taskId },
    } = await callAsTask(owner.client, 'acme__create_task', { title: 'mine' }));
  });

  async function cannotSee(mcp: TestMcpClient): Promise<void> {
    for (const attempt of [
      mcp.client.experimental.tasks.getTask(taskId),
      mcp.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      mcp.client.experimental.tasks.cancelTask(taskId),
    ]) {
      const error = await refusal(attempt);
      expect(error.code).toBe(ErrorCode.InvalidParams);
      expect(error.message).toMatch(/not found/i);
    }
    const { tasks } = await mcp.client.experimental.tasks.listTasks();
    expect(tasks.map((task) => task.taskId)).not.toContain(taskId);
  }

  it('its agent lists it, for its user', async () => {
    const { tasks } = await owner.client.experimental.tasks.listTasks();
    expect(tasks.map((task) => task.taskId)).toContain(taskId);
  });

  it('another agent in the same environment cannot see, poll or cancel it', async () => {
    const other = await createTestKey(stack.db.sql, { access: 'full', agentId: 'other-agent' });
    await cannotSee(await sessionClient('t_hal', { key: other }));
  });

  it('the same agent in another environment cannot either', async () => {
    const elsewhere = await createTestKey(stack.db.sql, {
      env: 'elsewhere',
      access: 'full',
      agentId: 'test-agent',
    });
    const address = new URL('/mcp', stack.api.url);
    const mcp = await connectMcp(address, {
      headers: { authorization: `Bearer ${elsewhere.key}`, 'service-user': 't_hal' },
    });
    clients.push(mcp);
    await cannotSee(mcp);
  });

  it('nor the same agent for another user', async () => {
    await cannotSee(await sessionClient('t_ann'));
  });

  it('a forged or malformed task id is not found, and a forged cursor is refused', async () => {
    for (const forged of ['00000000-0000-4000-8000-000000000000', 'x'.repeat(5000), '../../etc']) {
      const error = await refusal(owner.client.experimental.tasks.getTask(forged));
      expect(error.code).toBe(ErrorCode.InvalidParams);
    }
    const cursor = await refusal(owner.client.experimental.tasks.listTasks('not-a-cursor'));
    expect(cursor.code).toBe(ErrorCode.InvalidParams);
  });

  it('tasks/result on a working task answers within its bound, saying it still works', async () => {
    const error = await refusal(
      owner.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
    );
    expect(error.code).toBe(ErrorCode.RequestTimeout);
    expect(error.message).toMatch(/still working/);
  });
});

describe('hostile task requests', () => {
  /** One JSON-RPC request as any client could post it: the server is stateless. */
  async function rawRpc(
    address: URL,
    method: string,
    params: unknown,
  ): Promise<{ status: number; error?: { code: number; message: string }; result?: unknown }> {
    const response = await fetch(address, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    });
    const text = await response.text();
    const data = /^data: (.+)$/m.exec(text)?.[1] ?? text;
    return { status: response.status, ...(JSON.parse(data) as object) };
  }

  it('malformed task parameters are -32602 naming the field, and no task or call is made', async () => {
    const session = await mintSession(stack, { user: 't_ann' });
    const before = await stack.db.sql<{ n: number }[]>`select count(*)::int as n from mcp_tasks`;
    const cases: [string, unknown, RegExp][] = [
      [
        'tools/call',
        { name: 'acme__create_task', arguments: { title: 'x' }, task: 'soon' },
        /task must be an object/,
      ],
      [
        'tools/call',
        { name: 'acme__create_task', arguments: { title: 'x' }, task: { ttl: -5 } },
        /task\.ttl must not be negative/,
      ],
      [
        'tools/call',
        { name: 'acme__create_task', arguments: { title: 'x' }, task: { ttl: 'a day' } },
        /task\.ttl must be a number/,
      ],
      ['tasks/get', { taskId: 42 }, /taskId must be a task id/],
      ['tasks/result', {}, /taskId must be a task id/],
      ['tasks/cancel', { taskId: 'y'.repeat(10_000) }, /taskId is longer than any task id/],
      ['tasks/list', { cursor: { after: 1 } }, /cursor must be a string/],
    ];
    for (const [method, params, message] of cases) {
      const answer = await rawRpc(session.address, method, params);
      expect(answer.status).toBe(200);
      expect(answer.error?.code).toBe(ErrorCode.InvalidParams);
      expect(answer.error?.message).toMatch(message);
    }
    const after = await stack.db.sql<{ n: number }[]>`select count(*)::int as n from mcp_tasks`;
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('a refused call made as a task is a failed task holding the refusal', async () => {
    const mcp = await sessionClient('t_ann');
    const { task } = await callAsTask(mcp.client, 'acme__create_task', { title: 42 });
    const failed = await mcp.client.experimental.tasks.getTask(task.taskId);
    expect(failed.status).toBe('failed');
    expect(failed.statusMessage).toMatch(/title/);
    const result = await resultOf(mcp.client, task.taskId);
    expect(errorOf(result)).toMatchObject({ code: 'invalid_request' });
  });

  it('an unknown tool made as a task is the protocol error a plain call gets, and no task', async () => {
    const mcp = await sessionClient('t_ann');
    const error = await refusal(callAsTask(mcp.client, 'acme__no_such_tool', {}));
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/Unknown tool/);
  });
});

describe('a task outlives the process that created it', () => {
  it('created on one API process, polled on another, approved after it and the worker went away', async () => {
    // `gatehouse api` as a process of its own, as a deployment runs several.
    const creator = await startServiceProcess('api', stack.config, {
      env: {
        MCP_TASK_POLL_INTERVAL_MS: '200',
        MCP_TASK_RESULT_WAIT_SECONDS: String(RESULT_WAIT_SECONDS),
      },
    });
    let creatorRunning = true;
    try {
      const first = await sessionClient('t_ann', { api: { url: creator.url } });
      const title = `restarted ${String(Date.now())}`;
      const { task } = await callAsTask(first.client, 'acme__create_task', { title });

      // Another API process (the test's own) answers for it at once.
      const other = await sessionClient('t_ann');
      expect(await other.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
        taskId: task.taskId,
        status: 'working',
      });

      // The API process that created it and the worker both go away before the decision.
      await first.close();
      await creator.stop();
      creatorRunning = false;
      await stack.restartWorker();

      await decide(await approvalOf(task.taskId), 'approve');
      const result = await resultOf(other.client, task.taskId);
      expect(result.structuredContent).toMatchObject({ ok: true, data: { title } });
      expect((await titles('t_ann')).filter((one) => one === title)).toHaveLength(1);
    } finally {
      if (creatorRunning) await creator.stop();
    }
  });
});
