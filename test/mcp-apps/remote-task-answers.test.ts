import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  ActivityFailure,
  ApplicationFailure,
  RetryState,
  TimeoutFailure,
} from '@temporalio/common';
import { mcpToolUpstream, type McpUpstreamCall } from '../../activities/calls/mcp-tool-upstream.js';
import type {
  RemoteTaskRecord,
  ToolAttempt,
  ToolCallProgress,
} from '../../activities/calls/mcp-tool-attempt.js';
import type { McpTaskSupport } from '../../activities/calls/mcp-tool-call.js';
import type { CallAnswer, UpstreamOutcome } from '../../workflows/call-types.js';
import { settleFailure, settleOutcome } from '../../workflows/upstream-settlement.js';
import {
  startScriptedTaskServer,
  taskJson,
  type ScriptedTaskServer,
} from '../support/scripted-task-server.js';
import { startTaskMcpServer, type TaskMcpServer } from '../support/task-mcp-server.js';
import { REFUSED_PORT } from '../support/refused-port.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The upstream step of a call to a remote MCP tool that the server runs as a task (MCP tasks),
 * against servers on loopback: a hand-written one that answers the task methods as each test
 * scripts them (what no SDK server would send), and one made of the SDK's own task parts. What
 * each case answers the caller is read as the call workflow settles it.
 */
const started = stopsAfterAll();
let scripted: ScriptedTaskServer;
let sdk: TaskMcpServer;

beforeAll(async () => {
  [scripted, sdk] = await Promise.all([
    startScriptedTaskServer().then(started.add),
    startTaskMcpServer({ hugeBytes: 50_000 }).then(started.add),
  ]);
});

beforeEach(() => {
  scripted.received.length = 0;
  scripted.toolsCall = () => ({ result: `{"task":${taskJson('working')}}` });
  scripted.tasksGet = () => ({ result: taskJson('working') });
  scripted.tasksResult = () => ({ result: '{"content":[{"type":"text","text":"done"}]}' });
  scripted.tasksCancel = () => ({ result: taskJson('cancelled') });
});

/** Each request's bound (UPSTREAM_TIMEOUT_MS) in these tests. */
const TIMEOUT_MS = 5_000;

function deps(
  url: string,
  options: { limitBytes?: number; taskSupport?: McpTaskSupport | null } = {},
) {
  return {
    findApp: () =>
      Promise.resolve({
        id: 'remote',
        serverUrl: url,
        taskSupport: options.taskSupport === undefined ? 'required' : options.taskSupport,
      }),
    accessToken: () => Promise.resolve({ ok: true as const, accessToken: 'token' }),
    stepUp: () => Promise.resolve(false),
    timeoutMs: TIMEOUT_MS,
    limitBytes: options.limitBytes ?? 1024 * 1024,
    // The servers are on loopback, as MCP_APPS_ALLOW_PRIVATE lets tests have it.
    allowPrivate: true,
  };
}

function call(tool: string, scope: McpUpstreamCall['scope'] = 'write'): McpUpstreamCall {
  return {
    environmentId: 'env',
    connectionId: null,
    action: `remote.${tool}`,
    app: 'remote',
    scope,
    input: tool === 'gated-write' ? { note: 'n' } : {},
  };
}

/** An activity attempt as Temporal would run it: a regular activity's unless said otherwise. */
function attemptOf(
  options: { earlier?: ToolCallProgress; durable?: boolean; endsAt?: number } = {},
): ToolAttempt & { recorded: RemoteTaskRecord[] } {
  const recorded: RemoteTaskRecord[] = [];
  return {
    recorded,
    number: options.earlier ? 2 : 1,
    durable: options.durable ?? true,
    earlier: options.earlier ?? null,
    endsAt: options.endsAt ?? Number.POSITIVE_INFINITY,
    record: (task) => {
      recorded.push(task);
    },
    stop: () => undefined,
  };
}

const target = (scope: McpUpstreamCall['scope'] = 'write') => ({
  kind: 'action' as const,
  action: 'remote.job',
  app: 'remote',
  scope,
  input: {},
});

/** What the caller is answered, as the call workflow settles the outcome. */
function answerOf(outcome: UpstreamOutcome, scope: McpUpstreamCall['scope'] = 'write'): CallAnswer {
  const preparation = {
    ok: true as const,
    connectedUserId: 'user-1',
    connectionId: null,
    decision: 'allow' as const,
    reason: 'test',
    policyId: 'default',
    policyVersion: 1,
    rule: 'defaults.write',
    approval: { requested_from: [], ttl_seconds: 60 },
  };
  return settleOutcome(outcome, target(scope), preparation).answer;
}

/** The failure the step threw, and what the caller is answered for it. */
async function failureOf(
  running: Promise<unknown>,
): Promise<{ failure: ApplicationFailure; answer: CallAnswer }> {
  const error = await running.then(
    () => {
      throw new Error('the step answered; a failure was expected');
    },
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApplicationFailure)) throw error;
  return { failure: error, answer: settleFailure(error, target()).answer };
}

const signal = new AbortController().signal;

describe('a hostile task server', () => {
  it('answering `working` for ever is given up at the task’s ttl and cancelled: upstream_timeout, the write may have happened', async () => {
    scripted.toolsCall = () => ({ result: `{"task":${taskJson('working', { ttl: 1500 })}}` });
    const attempt = attemptOf();
    const { failure, answer } = await failureOf(
      mcpToolUpstream(deps(scripted.url), call('job'), signal, attempt),
    );
    expect(failure).toMatchObject({ type: 'UpstreamTimeout', nonRetryable: true });
    expect(failure.message).toContain('cancelled it');
    expect(answer).toMatchObject({
      kind: 'error',
      code: 'upstream_timeout',
      extra: { write_may_have_happened: true },
    });
    expect(scripted.count('tools/call')).toBe(1);
    expect(scripted.count('tasks/get')).toBeGreaterThan(1);
    expect(scripted.count('tasks/cancel')).toBe(1);
    expect(scripted.count('tasks/result')).toBe(0);
    expect(attempt.recorded).toEqual([
      expect.objectContaining({ taskId: 'task-1', sessionId: 'session-1' }),
    ]);
  });

  it('a task without a ttl is given up when the attempt must answer', async () => {
    scripted.toolsCall = () => ({ result: `{"task":${taskJson('working', { ttl: null })}}` });
    // What an attempt keeps back for the answer (three requests and 5 s), and one second more.
    const endsAt = Date.now() + 3 * TIMEOUT_MS + 5_000 + 1_000;
    const { failure } = await failureOf(
      mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf({ endsAt })),
    );
    expect(failure).toMatchObject({ type: 'UpstreamTimeout', nonRetryable: true });
    expect(scripted.count('tasks/cancel')).toBe(1);
  });

  it('a malformed CreateTaskResult is refused as unusable: nothing is waited for, nothing recorded', async () => {
    scripted.toolsCall = () => ({ result: '{"task":{"taskId":42,"status":"working"}}' });
    const attempt = attemptOf();
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attempt);
    expect(outcome).toMatchObject({ kind: 'unusable' });
    expect(answerOf(outcome)).toMatchObject({
      kind: 'error',
      code: 'upstream_unavailable',
      extra: { write_may_have_happened: true },
    });
    expect(attempt.recorded).toEqual([]);
    expect(scripted.count('tasks/get')).toBe(0);
    expect(scripted.count('tasks/cancel')).toBe(0);
  });

  it('a CreateTaskResult that names a task but no status: refused, and that task cancelled', async () => {
    scripted.toolsCall = () => ({ result: '{"task":{"taskId":"t-7"}}' });
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf());
    expect(outcome).toMatchObject({ kind: 'unusable' });
    expect(scripted.count('tasks/cancel')).toBe(1);
    expect(scripted.count('tasks/get')).toBe(0);
  });

  it('a task id too long to keep is refused', async () => {
    const taskId = 'x'.repeat(600);
    scripted.toolsCall = () => ({ result: `{"task":${taskJson('working', { taskId })}}` });
    const attempt = attemptOf();
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attempt);
    expect(outcome).toMatchObject({ kind: 'unusable' });
    expect(attempt.recorded).toEqual([]);
  });

  it('a huge result is payload_too_large: it never enters a Temporal payload', async () => {
    scripted.tasksGet = () => ({ result: taskJson('completed') });
    scripted.tasksResult = () => ({
      result: JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(50_000) }] }),
    });
    const outcome = await mcpToolUpstream(
      deps(scripted.url, { limitBytes: 20_000 }),
      call('job'),
      signal,
      attemptOf(),
    );
    expect(outcome).toMatchObject({ kind: 'too_large', limitBytes: 20_000 });
    expect(answerOf(outcome)).toMatchObject({ kind: 'error', code: 'payload_too_large' });
  });

  it('a result nested deeper than an answer may be is refused as unusable', async () => {
    scripted.tasksGet = () => ({ result: taskJson('completed') });
    const deep = `${'{"a":'.repeat(600)}1${'}'.repeat(600)}`;
    scripted.tasksResult = () => ({ result: `{"content":[],"structuredContent":${deep}}` });
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf());
    expect(outcome).toMatchObject({ kind: 'unusable' });
    expect((outcome as { reason: string }).reason).toContain('nests deeper');
  });

  it('a status MCP does not have is refused as unusable, and the task cancelled', async () => {
    scripted.tasksGet = () => ({ result: taskJson('exploded') });
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf());
    expect(outcome).toMatchObject({ kind: 'unusable' });
    expect(scripted.count('tasks/cancel')).toBe(1);
  });

  it('another task’s status is refused as unusable', async () => {
    scripted.tasksGet = () => ({ result: taskJson('completed', { taskId: 'task-2' }) });
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf());
    expect(outcome).toMatchObject({ kind: 'unusable' });
    expect(scripted.count('tasks/result')).toBe(0);
  });

  it('a task the server no longer knows: the tool may have run, and nothing is sent again', async () => {
    scripted.tasksGet = () => ({ error: { code: -32602, message: 'Task not found' } });
    const { failure, answer } = await failureOf(
      mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf()),
    );
    expect(failure).toMatchObject({
      type: 'UpstreamUnreachable',
      nonRetryable: true,
      details: [{ sent: true }],
    });
    expect(failure.message).toContain('Task not found');
    expect(answer).toMatchObject({
      code: 'upstream_unavailable',
      extra: { write_may_have_happened: true },
    });
    expect(scripted.count('tools/call')).toBe(1);
  });

  it('a session the server forgot: a new one is tried, where the task is not found either', async () => {
    scripted.tasksGet = (n) =>
      n === 0 ? { status: 404 } : { error: { code: -32602, message: 'Task not found' } };
    const { failure } = await failureOf(
      mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf()),
    );
    expect(failure).toMatchObject({ type: 'UpstreamUnreachable', nonRetryable: true });
    expect(scripted.count('initialize')).toBe(2);
    expect(scripted.count('tools/call')).toBe(1);
  });

  it('polls that fail on the way are asked again: the task’s result is the answer', async () => {
    scripted.tasksGet = (n) =>
      n === 0 ? { status: 500 } : n === 1 ? { status: 502 } : { result: taskJson('completed') };
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf());
    expect(answerOf(outcome)).toEqual({
      kind: 'json',
      status: 200,
      body: { ok: true, data: { content: [{ type: 'text', text: 'done' }] } },
    });
    expect(scripted.count('tasks/get')).toBe(3);
  });

  it('a JSON-RPC error from tasks/result is the tool’s own error, answered as a plain call’s', async () => {
    scripted.tasksGet = () => ({ result: taskJson('completed') });
    scripted.tasksResult = () => ({ error: { code: -32602, message: 'bad arguments' } });
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf());
    expect(answerOf(outcome)).toMatchObject({
      kind: 'json',
      body: {
        ok: false,
        data: { error: { code: -32602, message: 'MCP error -32602: bad arguments' } },
      },
    });
  });

  it('a server that answers a task-augmented call with a plain result is answered as a plain call', async () => {
    scripted.toolsCall = () => ({ result: '{"content":[{"type":"text","text":"at once"}]}' });
    const attempt = attemptOf();
    const outcome = await mcpToolUpstream(deps(scripted.url), call('job'), signal, attempt);
    expect(answerOf(outcome)).toMatchObject({
      body: { ok: true, data: { content: [{ type: 'text', text: 'at once' }] } },
    });
    expect(attempt.recorded).toEqual([]);
    expect(scripted.count('tasks/get')).toBe(0);
  });
});

describe('an attempt after a lost worker', () => {
  it('goes on with the task the attempt before it recorded, in its session: the tool is not called again', async () => {
    scripted.tasksGet = () => ({ result: taskJson('completed') });
    const earlier: ToolCallProgress = {
      step: 'task',
      task: {
        taskId: 'task-1',
        sessionId: 'session-1',
        protocolVersion: '2025-11-25',
        until: Date.now() + 60_000,
      },
    };
    const outcome = await mcpToolUpstream(
      deps(scripted.url),
      call('job'),
      signal,
      attemptOf({ earlier }),
    );
    expect(answerOf(outcome)).toMatchObject({
      body: { ok: true, data: { content: [{ type: 'text', text: 'done' }] } },
    });
    expect(scripted.received).toEqual(['tasks/get', 'tasks/result']);
  });

  it('after the wait for the task is over cancels it, in its session, and answers upstream_timeout', async () => {
    const earlier: ToolCallProgress = {
      step: 'task',
      task: {
        taskId: 'task-1',
        sessionId: 'session-1',
        protocolVersion: null,
        until: Date.now() - 1,
      },
    };
    const { failure, answer } = await failureOf(
      mcpToolUpstream(deps(scripted.url), call('job'), signal, attemptOf({ earlier })),
    );
    expect(failure).toMatchObject({ type: 'UpstreamTimeout', nonRetryable: true });
    expect(answer).toMatchObject({
      code: 'upstream_timeout',
      extra: { write_may_have_happened: true },
    });
    expect(scripted.received).toEqual(['tasks/cancel']);
  });

  it('that finds no task recorded sends nothing: the write may have happened', async () => {
    const { failure, answer } = await failureOf(
      mcpToolUpstream(
        deps(scripted.url),
        call('job'),
        signal,
        attemptOf({ earlier: { step: 'calling' } }),
      ),
    );
    expect(failure).toMatchObject({ type: 'UpstreamTimeout', nonRetryable: true });
    expect(answer).toMatchObject({
      code: 'upstream_timeout',
      extra: { write_may_have_happened: true },
    });
    expect(scripted.received).toEqual([]);
  });

  it('of a read calls again: a read may be sent twice', async () => {
    scripted.tasksGet = () => ({ result: taskJson('completed') });
    const outcome = await mcpToolUpstream(
      deps(scripted.url),
      call('job', 'read'),
      signal,
      attemptOf({ earlier: { step: 'calling' }, durable: false }),
    );
    expect(answerOf(outcome, 'read')).toMatchObject({ body: { ok: true } });
    expect(scripted.count('tools/call')).toBe(1);
  });

  it('is the only way a write is attempted again: its failures are final, even one that sent nothing', async () => {
    const { failure } = await failureOf(
      mcpToolUpstream(
        deps(`http://127.0.0.1:${String(REFUSED_PORT)}/mcp`),
        call('job'),
        signal,
        attemptOf(),
      ),
    );
    expect(failure).toMatchObject({
      type: 'UpstreamUnreachable',
      nonRetryable: true,
      details: [{ sent: false }],
    });
  });

  it('not taken by any worker before its callers’ deadline is a write that may have happened, not one that never ran', () => {
    const timedOut = (details: unknown) =>
      new ActivityFailure(
        'activity timeout',
        'callUpstream',
        '1',
        RetryState.NON_RETRYABLE_FAILURE,
        'worker',
        new TimeoutFailure('activity ScheduleToStart timeout', details, 'SCHEDULE_TO_START'),
      );
    // The first attempt, which no worker took: nothing was sent.
    expect(settleFailure(timedOut(undefined), target()).answer).toMatchObject({
      code: 'service_unavailable',
      extra: { call_state: 'not_started' },
    });
    // A later one: its predecessor ran, and recorded that it did.
    expect(settleFailure(timedOut({ step: 'calling' }), target()).answer).toMatchObject({
      code: 'upstream_timeout',
      extra: { write_may_have_happened: true },
    });
  });
});

describe('a task server made with the SDK', () => {
  it('a task that failed is a failure with the server’s status message', async () => {
    const outcome = await mcpToolUpstream(deps(sdk.url), call('fails'), signal, attemptOf());
    expect(answerOf(outcome)).toMatchObject({
      kind: 'json',
      status: 200,
      body: {
        ok: false,
        upstream_status: 200,
        data: {
          error: {
            message: "The MCP server's task failed: the disk is full",
            task: { status: 'failed', status_message: 'the disk is full' },
          },
        },
      },
    });
  });

  it('a task failed by the tool’s own isError result answers that result, as a plain call would', async () => {
    const outcome = await mcpToolUpstream(deps(sdk.url), call('declined'), signal, attemptOf());
    expect(answerOf(outcome)).toEqual({
      kind: 'json',
      status: 200,
      body: {
        ok: false,
        data: { content: [{ type: 'text', text: 'card declined' }] },
        upstream_status: 200,
      },
    });
  });

  it('a task that asks for input is cancelled and refused, saying why', async () => {
    const before = sdk.received.filter((each) => each.method === 'tasks/cancel').length;
    const outcome = await mcpToolUpstream(deps(sdk.url), call('asks-input'), signal, attemptOf());
    const answer = answerOf(outcome);
    expect(answer).toMatchObject({
      kind: 'error',
      code: 'upstream_unavailable',
      extra: { write_may_have_happened: true },
    });
    const message = (answer as { message: string }).message;
    expect(message).toContain('asks for input: Which account should be charged?');
    expect(message).toContain("does not pass a remote server's requests for input on to agents");
    expect(sdk.received.filter((each) => each.method === 'tasks/cancel').length - before).toBe(1);
  });

  it('a tool that may run as a task is called as one where the server runs tool calls as tasks', async () => {
    const outcome = await mcpToolUpstream(
      deps(sdk.url, { taskSupport: 'optional' }),
      call('optional'),
      signal,
      attemptOf(),
    );
    expect(answerOf(outcome)).toMatchObject({
      body: { ok: true, data: { content: [{ type: 'text', text: 'done' }] } },
    });
    expect(sdk.received.filter((each) => each.tool === 'optional').at(-1)).toMatchObject({
      asTask: true,
    });
  });

  it('where the server does not say it runs tool calls as tasks, the tool is called plainly', async () => {
    const plain = started.add(await startTaskMcpServer({ tasksCapability: false }));
    const outcome = await mcpToolUpstream(
      deps(plain.url, { taskSupport: 'optional' }),
      call('optional'),
      signal,
      attemptOf(),
    );
    expect(answerOf(outcome)).toMatchObject({
      body: { ok: true, data: { content: [{ type: 'text', text: 'done' }] } },
    });
    expect(plain.received.filter((each) => each.method === 'tools/call')).toEqual([
      expect.objectContaining({ tool: 'optional', asTask: false }),
    ]);
    expect(plain.received.some((each) => each.method.startsWith('tasks/'))).toBe(false);
  });
});
