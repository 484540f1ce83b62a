import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  ErrorCode,
  McpError,
  type Request as JsonRpcRequest,
  type RequestId,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { v7 as uuidv7 } from 'uuid';
import {
  cancelHeldMcpTask,
  findMcpTask,
  listMcpTasks,
  type McpTaskWithApproval,
  type TaskCursor,
  type TaskOwner,
} from '../../../activities/db/mcp-tasks.js';
import { taskEnding } from '../../../activities/mcp-tasks/task-ending.js';
import { cancelSignal } from '../../../workflows/call-messages.js';
import type { ApiDeps } from '../../deps.js';
import type { McpPrincipal } from '../principal.js';
import { taskView } from './task-view.js';

/** How many tasks one `tasks/list` page holds; the rest follow by cursor. */
const TASKS_PAGE_SIZE = 50;
/** How long a cancellation waits for Temporal to take the held call's cancel signal. */
const SIGNAL_DEADLINE_MS = 5_000;

/** The protocol's answer for a task this request may not see, whatever the reason. */
export function taskNotFound(): McpError {
  return new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
}

function cursorOf(task: McpTaskWithApproval): string {
  const cursor: TaskCursor = { createdAt: task.createdAt.toISOString(), id: task.id };
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function cursorFrom(cursor: string | undefined): TaskCursor | null {
  if (cursor === undefined) return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as TaskCursor).id === 'string' &&
      typeof (parsed as TaskCursor).createdAt === 'string' &&
      !Number.isNaN(Date.parse((parsed as TaskCursor).createdAt))
    ) {
      return parsed as TaskCursor;
    }
  } catch {
    // Not one of ours: refused below.
  }
  throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: pass nextCursor as it was given.');
}

/**
 * MCP tasks as the SDK's task handlers see them (`tasks/get`, `tasks/list`, `tasks/cancel`), for
 * the agent of one request: the tasks are rows in Postgres (`mcp_tasks`), each held call's run
 * is its own workflow (workflows/mcp-task.ts), so any API process answers for any task, and a
 * restart loses none. Only the request's owner (agent, environment, user) sees a task: any
 * other id, forged or another's, is "not found", the same answer. Tasks are created by
 * `tools/call` (task-creation.ts) and end in their workflow, never through this store;
 * `tasks/result` has its own bounded handler (task-result.ts).
 */
export class McpTaskStore implements TaskStore {
  private readonly owner: TaskOwner;

  constructor(
    private readonly deps: ApiDeps,
    principal: McpPrincipal,
  ) {
    this.owner = {
      environmentId: principal.caller.environmentId,
      agentId: principal.caller.agentId,
      userExternalId: principal.userExternalId,
    };
  }

  /** Names the owner, for sharing reads between its requests (task-waiters.ts). */
  get ownerKey(): string {
    return [this.owner.environmentId, this.owner.agentId, this.owner.userExternalId].join('\u0000');
  }

  private get pollIntervalMs(): number {
    return this.deps.config.mcp.tasks.pollIntervalMs;
  }

  /** The task's row, if this request's owner may see it. */
  find(taskId: string): Promise<McpTaskWithApproval | null> {
    return findMcpTask(this.deps.sql, this.owner, taskId);
  }

  createTask(
    _params: CreateTaskOptions,
    _requestId: RequestId,
    _request: JsonRpcRequest,
  ): Promise<Task> {
    return Promise.reject(new Error('MCP tasks are created by tools/call, with the call'));
  }

  async getTask(taskId: string): Promise<Task | null> {
    const task = await this.find(taskId);
    return task ? taskView(task, this.pollIntervalMs) : null;
  }

  storeTaskResult(): Promise<void> {
    return Promise.reject(new Error('an MCP task ends in its workflow'));
  }

  getTaskResult(): Promise<Result> {
    return Promise.reject(new Error('tasks/result has its own handler'));
  }

  /**
   * `tasks/cancel` (the SDK's handler has refused a task that ended): the agent withdraws its
   * held call. While the approval is pending it is cancelled with the task, in one transaction,
   * and audited; an approval already decided is the approver's, and the call runs once (or is
   * denied): the cancellation is refused.
   */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') throw new Error(`an MCP task is not set ${status} by a request`);
    const task = await this.find(taskId);
    if (!task) throw taskNotFound();
    const at = new Date().toISOString();
    const outcome = await cancelHeldMcpTask(
      this.deps.sql,
      this.deps.config.encryption,
      task,
      taskEnding({ kind: 'withdrawn', approvalId: task.approvalId ?? '', at }),
      (approval) => ({
        id: uuidv7(),
        environmentId: approval.environmentId,
        action: approval.action,
        scope: approval.scope,
        decision: 'denied',
        reason:
          `cancelled: the agent cancelled its MCP task ${task.id} while approval ${approval.id} ` +
          'was pending; the call did not run',
        agentId: approval.agentId,
        via: 'mcp',
        userExternalId: approval.userExternalId,
        connectedUserId: null,
        connectionId: null,
        approvalId: approval.id,
        request: approval.request,
        response: null,
        traceId: uuidv7().replace(/-/g, ''),
        policyId: approval.policyId,
        policyVersion: approval.policyVersion,
      }),
    );
    if (outcome.kind === 'ended') {
      throw new McpError(ErrorCode.InvalidParams, 'Cannot cancel a task that has ended.');
    }
    if (outcome.kind === 'decided') {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Cannot cancel this task: approval ${task.approvalId ?? ''} was ` +
          `${outcome.approvalStatus ?? 'decided'} before the cancellation, so the decision stands ` +
          '(an approved call runs once; its answer is the task’s result).',
      );
    }
    // The held call workflow ends now rather than at the expiry. Postgres already refuses any
    // decision, so a signal Temporal does not take in time changes nothing but when it ends.
    try {
      await this.deps.temporal.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () =>
        this.deps.temporal.workflow
          .getHandle(outcome.approval.workflowId)
          .signal(cancelSignal, `mcp task ${task.id} cancelled by its agent`),
      );
    } catch {
      // Ended already, or Temporal unreachable: see above.
    }
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const after = cursorFrom(cursor);
    const rows = await listMcpTasks(this.deps.sql, this.owner, after, TASKS_PAGE_SIZE + 1);
    const page = rows.slice(0, TASKS_PAGE_SIZE);
    const last = page.at(-1);
    return {
      tasks: page.map((task) => taskView(task, this.pollIntervalMs)),
      ...(rows.length > TASKS_PAGE_SIZE && last ? { nextCursor: cursorOf(last) } : {}),
    };
  }
}
