import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Payload } from '@temporalio/common';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { eventually } from '../support/eventually.js';
import { stopsAfterAll } from '../support/stops.js';
import { startTaskMcpServer, type TaskMcpServer } from '../support/task-mcp-server.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';

/**
 * Calls to remote MCP tools that the server runs as tasks (MCP tasks), end to end: REST, the
 * call workflow, the write activity polling the task, against servers on loopback: one made of
 * the SDK's task parts (test/support/task-mcp-server.ts), which counts what it receives, and the
 * reference server-everything, whose `simulate-research-query` is a task tool. Each HTTP request
 * to the server is bounded by UPSTREAM_TIMEOUT_MS (2 s here); the task is not.
 */
const UPSTREAM_TIMEOUT_MS = 2_000;

const started = stopsAfterAll();
let stack: CallStack;
let server: TaskMcpServer;
let everything: McpServerProcess;

async function register(id: string, url: string): Promise<void> {
  const answer = await stack.request(stack.key, 'POST', '/v1/mcp-apps', {
    body: { id, name: id, server_url: url, trust_annotations: true },
  });
  if (answer.status !== 200) throw new Error(`registering failed: ${JSON.stringify(answer.body)}`);
}

beforeAll(async () => {
  [stack, server, everything] = await Promise.all([
    startCallStack({ env: { UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) } }).then(started.add),
    startTaskMcpServer().then(started.add),
    startServerEverything().then(started.add),
  ]);
  await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
  await Promise.all([register('tasks', server.url), register('everything', everything.url)]);
}, 120_000);

/** The `gated-write` tasks the server created so far, oldest first. */
const gatedTasks = () => server.tasks.filter((task) => task.tool === 'gated-write');

/**
 * The `gated-write` task created after `before` others, once the server has created it; a call
 * `answering` before that fails the wait, saying what it answered.
 */
function nextGatedTask(before: number, answering: Promise<Answer>) {
  let early: Answer | null = null;
  void answering.then((answer) => {
    early = answer;
  });
  return eventually('the gated-write task created', () => {
    const task = gatedTasks()[before];
    if (!task && early) throw new Error(`answered with no task: ${JSON.stringify(early.body)}`);
    return task;
  });
}

function pollsOf(taskId: string): number {
  return server.received.filter((each) => each.method === 'tasks/get' && each.taskId === taskId)
    .length;
}

/** The answer to an identical request, which joins the call while it is still open. */
async function answerOf(send: () => Promise<Answer>, first: Promise<Answer>): Promise<Answer> {
  let answer = await first;
  // The API stops waiting after its own bound; the call goes on, and the same call joins it.
  while (
    answer.status === 503 &&
    (answer.body.error as { call_state?: string }).call_state === 'pending'
  ) {
    answer = await send();
  }
  return answer;
}

describe('a remote tool the server runs as a task', () => {
  it('answers the task’s result though it took longer than UPSTREAM_TIMEOUT_MS, and acts once', async () => {
    const note = 'after the upstream timeout';
    const send = () => stack.run('tasks.gated-write', { user: 'u_long', input: { note } });
    const [tasksBefore, callsBefore, effectsBefore] = [
      gatedTasks().length,
      server.calls('gated-write'),
      server.effects(),
    ];
    const answering = send();
    const task = await nextGatedTask(tasksBefore, answering);
    // The claim is about time: the task has outlived every single request's bound, twice over.
    await eventually('the task outlived UPSTREAM_TIMEOUT_MS twice over', () =>
      Date.now() - task.createdAt > 2 * UPSTREAM_TIMEOUT_MS && pollsOf(task.taskId) > 1
        ? true
        : null,
    );
    await server.release(task.taskId);
    const answer = await answerOf(send, answering);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      data: { content: [{ type: 'text', text: `wrote: ${note}` }] },
    });
    expect(server.calls('gated-write') - callsBefore).toBe(1);
    expect(server.effects() - effectsBefore).toBe(1);
    expect(gatedTasks()).toHaveLength(tasksBefore + 1);
    expect(
      server.received.filter((each) => each.method === 'tools/call' && each.tool === 'gated-write'),
    ).toEqual([expect.objectContaining({ asTask: true })]);
  });

  it('that asks for input is answered as a failure saying why, and cancelled', async () => {
    const answer = await stack.run('tasks.asks-input', { user: 'u_input', input: {} });
    expect(answer.status).toBe(503);
    expect(answer.body.error).toMatchObject({
      code: 'upstream_unavailable',
      write_may_have_happened: true,
    });
    const message = (answer.body.error as { message: string }).message;
    expect(message).toContain('asks for input: Which account should be charged?');
    expect(message).toContain("does not pass a remote server's requests for input on to agents");
    const task = server.tasks.filter((each) => each.tool === 'asks-input').at(-1);
    expect(
      server.received.filter(
        (each) => each.method === 'tasks/cancel' && each.taskId === task?.taskId,
      ),
    ).toHaveLength(1);
  });

  it('that failed is answered as the app’s failure, with the server’s reason', async () => {
    const answer = await stack.run('tasks.fails', { user: 'u_fails', input: {} });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      ok: false,
      upstream_status: 200,
      data: { error: { message: "The MCP server's task failed: the disk is full" } },
    });
  });

  it('server-everything’s simulate-research-query: its report, after its four stages', async () => {
    const answer = await stack.run('everything.simulate-research-query', {
      user: 'u_research',
      input: { topic: 'tides' },
    });
    expect(answer.status).toBe(200);
    const data = answer.body.data as { content: { type: string; text: string }[] };
    expect(answer.body.ok).toBe(true);
    expect(data.content[0]?.text).toContain('# Research Report: tides');
  });
});

/**
 * `gatehouse worker` as a process of its own, allowed to reach MCP servers on loopback as the
 * test's configuration is (MCP_APPS_ALLOW_PRIVATE, which the process inherits from this one).
 */
async function workerProcessReachingLoopback(): Promise<WorkerProcess> {
  const before = process.env.MCP_APPS_ALLOW_PRIVATE;
  process.env.MCP_APPS_ALLOW_PRIVATE = String(stack.config.mcpApps.allowPrivate);
  try {
    return await startWorkerProcess(stack.config);
  } finally {
    if (before === undefined) delete process.env.MCP_APPS_ALLOW_PRIVATE;
    else process.env.MCP_APPS_ALLOW_PRIVATE = before;
  }
}

/** The heartbeat details Temporal holds for the call's pending write, decoded. */
async function recordedDetails(): Promise<unknown> {
  const client = stack.api.temporal;
  const query = `WorkflowType = 'governedCall' AND TaskQueue = '${stack.config.temporal.taskQueue}' AND ExecutionStatus = 'Running' AND GatehouseAction = 'tasks.gated-write'`;
  for await (const execution of client.workflow.list({ query })) {
    const description = await client.workflow.getHandle(execution.workflowId).describe();
    const payload = description.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
    if (!payload) continue;
    const converter = client.options.loadedDataConverter;
    let payloads: Payload[] = [payload];
    for (const codec of [...converter.payloadCodecs].reverse())
      payloads = await codec.decode(payloads);
    return converter.payloadConverter.fromPayload(payloads[0] as Payload);
  }
  return null;
}

describe('a worker lost while it waits for the task', () => {
  it('is followed by an attempt that goes on with the recorded task: the tool is called once', async () => {
    // The write runs on a worker process that can be killed outright.
    await stack.worker.stop();
    const child = await workerProcessReachingLoopback();
    started.push(() => child.kill());
    const note = 'across a lost worker';
    const send = () => stack.run('tasks.gated-write', { user: 'u_lost', input: { note } });
    const [tasksBefore, callsBefore, effectsBefore] = [
      gatedTasks().length,
      server.calls('gated-write'),
      server.effects(),
    ];
    const answering = send();
    const task = await nextGatedTask(tasksBefore, answering);
    // Killed only once Temporal holds the task's id: what the next attempt goes on from.
    await eventually('the task recorded in Temporal', async () => {
      const details = (await recordedDetails()) as {
        step?: string;
        task?: { taskId?: string };
      } | null;
      return details?.step === 'task' && details.task?.taskId === task.taskId ? true : null;
    });
    await child.kill();
    const pollsBefore = pollsOf(task.taskId);
    await stack.restartWorker();
    await eventually('the next attempt polling the task', () =>
      pollsOf(task.taskId) > pollsBefore ? true : null,
    );
    await server.release(task.taskId);
    const answer = await answerOf(send, answering);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      data: { content: [{ type: 'text', text: `wrote: ${note}` }] },
    });
    // The server received the tools/call once, made one task and acted once.
    expect(server.calls('gated-write') - callsBefore).toBe(1);
    expect(gatedTasks()).toHaveLength(tasksBefore + 1);
    expect(server.effects() - effectsBefore).toBe(1);
    // The later polls came in the session the task was created in.
    const polls = server.received.filter((each) => each.taskId === task.taskId);
    expect(new Set(polls.map((each) => each.sessionId))).toEqual(new Set([task.sessionId]));
  }, 180_000);
});
