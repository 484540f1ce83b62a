import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  InMemoryTaskStore,
  type CreateTaskRequestHandlerExtra,
  type TaskRequestHandlerExtra,
} from '@modelcontextprotocol/sdk/experimental/tasks';
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** One JSON-RPC request as the server received it. */
export interface Received {
  method: string;
  /** The MCP session it came in; null for `initialize`. */
  sessionId: string | null;
  /** `tools/call`: the tool. */
  tool?: string;
  /** `tasks/*`: the task. */
  taskId?: string;
  /** `tools/call`: whether it asked to run as a task (`params.task`). */
  asTask?: boolean;
}

/** A task the server created, as the test follows it. */
export interface CreatedTask {
  taskId: string;
  tool: string;
  sessionId: string | null;
  /** When the server created it (epoch ms). */
  createdAt: number;
}

export interface TaskMcpServer {
  url: string;
  received: Received[];
  tasks: CreatedTask[];
  /** How many `tools/call` requests for `tool` arrived. */
  calls(tool: string): number;
  /** How many times `gated-write`'s side effect took place. */
  effects(): number;
  /** Completes a `gated-write` task: its side effect happens, once, and its result is stored. */
  release(taskId: string): Promise<void>;
  close(): Promise<void>;
}

export interface TaskServerOptions {
  /**
   * Whether `initialize` says the server runs `tools/call` as tasks (default yes). Without it
   * the tools are still listed as task tools: a client must then call them plainly.
   */
  tasksCapability?: boolean;
  /** The length of `huge`'s result text. */
  hugeBytes?: number;
}

/** The server's pollInterval: small, so that tests wait little. */
const POLL_MS = 200;

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/**
 * A remote MCP server whose tools run as tasks (MCP 2025-11-25, "Tasks"), made of the official
 * SDK's own parts: `McpServer.experimental.tasks.registerToolTask` and its `InMemoryTaskStore`,
 * over Streamable HTTP with a session per client (each task bound to the session it was created
 * in, as the SDK's store binds it). One store serves every session, so the test sees each task.
 *
 * - `gated-write` (a write by its annotations) works until the test calls `release`, which
 *   carries out its side effect once and completes it;
 * - `asks-input` moves to `input_required` at once, asking which account to charge;
 * - `fails` fails with the status message "the disk is full" and no result;
 * - `declined` fails with an `isError` result, "card declined";
 * - `huge` completes at once with a result of `hugeBytes` characters;
 * - `optional` (taskSupport `optional`) completes at once.
 */
export async function startTaskMcpServer(options: TaskServerOptions = {}): Promise<TaskMcpServer> {
  const store = new InMemoryTaskStore();
  const received: Received[] = [];
  const tasks: CreatedTask[] = [];
  /** `gated-write` tasks waiting for the test, with their note. */
  const gated = new Map<string, string>();
  let effects = 0;

  async function created(tool: string, extra: CreateTaskRequestHandlerExtra): Promise<Task> {
    const task = await extra.taskStore.createTask({ ttl: 10 * 60_000, pollInterval: POLL_MS });
    tasks.push({
      taskId: task.taskId,
      tool,
      sessionId: extra.sessionId ?? null,
      createdAt: Date.now(),
    });
    return task;
  }
  const getTask = (_args: unknown, extra: TaskRequestHandlerExtra) =>
    extra.taskStore.getTask(extra.taskId);
  const getTaskResult = async (_args: unknown, extra: TaskRequestHandlerExtra) =>
    (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult;
  const writes = { readOnlyHint: false, destructiveHint: false };

  function mcpServer(): McpServer {
    const mcp = new McpServer(
      { name: 'tasks', version: '1.0.0' },
      {
        capabilities: {
          tools: {},
          ...(options.tasksCapability === false
            ? {}
            : { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),
        },
        taskStore: store,
      },
    );
    const tasksOf = mcp.experimental.tasks;
    tasksOf.registerToolTask(
      'gated-write',
      {
        description: 'Writes a note, when the test lets it',
        inputSchema: { note: z.string() },
        annotations: writes,
        execution: { taskSupport: 'required' },
      },
      {
        createTask: async ({ note }, extra) => {
          const task = await created('gated-write', extra);
          gated.set(task.taskId, note);
          return { task };
        },
        getTask,
        getTaskResult,
      },
    );
    tasksOf.registerToolTask(
      'asks-input',
      {
        description: 'Needs to know which account to charge',
        inputSchema: {},
        annotations: writes,
      },
      {
        createTask: async (_args, extra) => {
          const task = await created('asks-input', extra);
          await extra.taskStore.updateTaskStatus(
            task.taskId,
            'input_required',
            'Which account should be charged?',
          );
          return { task: await extra.taskStore.getTask(task.taskId) };
        },
        getTask,
        getTaskResult,
      },
    );
    tasksOf.registerToolTask(
      'fails',
      { description: 'Fails', inputSchema: {}, annotations: writes },
      {
        createTask: async (_args, extra) => {
          const task = await created('fails', extra);
          await extra.taskStore.updateTaskStatus(task.taskId, 'failed', 'the disk is full');
          return { task };
        },
        getTask,
        getTaskResult,
      },
    );
    tasksOf.registerToolTask(
      'declined',
      { description: 'Reports a failure as its result', inputSchema: {}, annotations: writes },
      {
        createTask: async (_args, extra) => {
          const task = await created('declined', extra);
          await extra.taskStore.storeTaskResult(task.taskId, 'failed', {
            ...text('card declined'),
            isError: true,
          });
          return { task };
        },
        getTask,
        getTaskResult,
      },
    );
    tasksOf.registerToolTask(
      'huge',
      { description: 'A large result', inputSchema: {}, annotations: writes },
      {
        createTask: async (_args, extra) => {
          const task = await created('huge', extra);
          await extra.taskStore.storeTaskResult(
            task.taskId,
            'completed',
            text('x'.repeat(options.hugeBytes ?? 100_000)),
          );
          return { task };
        },
        getTask,
        getTaskResult,
      },
    );
    tasksOf.registerToolTask(
      'optional',
      {
        description: 'May run as a task',
        inputSchema: {},
        annotations: writes,
        execution: { taskSupport: 'optional' },
      },
      {
        createTask: async (_args, extra) => {
          const task = await created('optional', extra);
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', text('done'));
          return { task };
        },
        getTask,
        getTaskResult,
      },
    );
    return mcp;
  }

  const transports = new Map<string, StreamableHTTPServerTransport>();
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.all('/mcp', async (req, res) => {
    const sessionId = req.get('mcp-session-id') ?? null;
    if (req.method === 'POST') {
      const body = req.body as {
        method?: string;
        params?: { name?: string; taskId?: string; task?: unknown };
      };
      if (body.method) {
        received.push({
          method: body.method,
          sessionId,
          ...(body.method === 'tools/call'
            ? { tool: body.params?.name ?? '', asTask: body.params?.task !== undefined }
            : {}),
          ...(body.params?.taskId ? { taskId: body.params.taskId } : {}),
        });
      }
    }
    let transport = sessionId === null ? undefined : transports.get(sessionId);
    if (!transport) {
      if (sessionId !== null) {
        res.status(404).json({ error: 'no such session' });
        return;
      }
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          transports.set(id, fresh);
        },
      });
      await mcpServer().connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res, req.body);
  });
  const server: http.Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));

  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/mcp`,
    received,
    tasks,
    calls: (tool) =>
      received.filter((each) => each.method === 'tools/call' && each.tool === tool).length,
    effects: () => effects,
    async release(taskId) {
      const note = gated.get(taskId);
      if (note === undefined) throw new Error(`no gated task ${taskId}`);
      gated.delete(taskId);
      effects += 1;
      await store.storeTaskResult(taskId, 'completed', text(`wrote: ${note}`));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const transport of transports.values()) void transport.close();
        store.cleanup();
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
