import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import {
  abandonMcpTask,
  insertEndedMcpTask,
  insertMcpTask,
  pruneExpiredMcpTasks,
  type McpTask,
  type NewMcpTask,
} from '../../../activities/db/mcp-tasks.js';
import { taskEnding } from '../../../activities/mcp-tasks/task-ending.js';
import {
  MCP_TASK_WORKFLOW,
  mcpTaskWorkflowId,
  type McpTaskStart,
} from '../../../workflows/mcp-task-types.js';
import { searchAttributes } from '../../../workflows/search-attributes.js';
import { runToolCall, type HeldApproval, type ToolCallContext } from '../tool-call.js';
import { actionNameOf } from '../tools.js';
import type { ToolCallExtra } from '../url-elicitation.js';
import { taskView } from './task-view.js';

/** The `_meta` key of what a host may hand its model at once while the task works. */
const MODEL_IMMEDIATE_RESPONSE = 'io.modelcontextprotocol/model-immediate-response';

/** How many expired tasks one creation deletes at most. */
const PRUNE_BATCH = 2;

/** As the held call workflow's deadline bounds its start, this bounds the task workflow's. */
const START_DEADLINE_MS = 5_000;

/**
 * The task as created. Every task begins `working`, as the protocol says; one that ended as it
 * was created says so at its first tasks/get. A held one says who is asked and until when.
 */
function created(
  task: McpTask,
  pollIntervalMs: number,
  approval: HeldApproval | null,
): CreateTaskResult['task'] {
  return taskView(
    {
      ...task,
      status: 'working',
      approvalStatus: approval ? 'pending' : null,
      approvalRequestedFrom: approval?.requested_from ?? null,
      approvalExpiresAt: approval ? new Date(approval.expires_at) : null,
    },
    pollIntervalMs,
  );
}

/**
 * A task-augmented `tools/call`: the call is made at once, as any tool call (with the task's own
 * Idempotency-Key unless the request names one). Held, it becomes a task that its workflow
 * finishes once a person decides (workflows/mcp-task.ts); answered at once (it ran, or was
 * refused or denied), it is a task that has ended with that result. Either way the client gets
 * `CreateTaskResult`, so a client that asked for a task always gets one.
 */
export async function callToolAsTask(
  ctx: ToolCallContext,
  tool: string,
  args: Record<string, unknown> | undefined,
  extra: ToolCallExtra,
): Promise<CreateTaskResult> {
  const { deps, principal } = ctx;
  const { sql, config } = deps;
  const taskId = randomUUID();
  const outcome = await runToolCall(ctx, tool, args, extra, {
    idempotencyKey: `mcp-task-${taskId}`,
  });
  const base: NewMcpTask = {
    id: taskId,
    environmentId: principal.caller.environmentId,
    agentId: principal.caller.agentId,
    keyId: principal.caller.keyId,
    userExternalId: principal.userExternalId,
    tool: Array.from(tool).slice(0, 200).join(''),
    action:
      outcome.kind === 'held'
        ? outcome.action.id
        : Array.from(actionNameOf(tool)).slice(0, 200).join(''),
    approvalId: null,
    workflowId: null,
    ttlMs: config.mcp.tasks.ttlSeconds * 1000,
  };
  const { pollIntervalMs } = config.mcp.tasks;
  // Twice as many as are created, so expired tasks never pile up.
  await pruneExpiredMcpTasks(sql, PRUNE_BATCH);
  if (outcome.kind === 'answered') {
    const task = await insertEndedMcpTask(
      sql,
      config.encryption,
      base,
      taskEnding({ kind: 'tool_result', result: outcome.result }),
    );
    return { task: created(task, pollIntervalMs, null) };
  }
  const workflowId = mcpTaskWorkflowId(principal.caller.environmentName, taskId);
  // Stored before its workflow starts, so the workflow's end always finds the task to settle.
  const task = await insertMcpTask(sql, {
    ...base,
    approvalId: outcome.approval.id,
    workflowId,
  });
  const start: McpTaskStart = {
    taskId,
    call: outcome.call,
    keyId: principal.caller.keyId,
    approvalId: outcome.approval.id,
    expiresAt: outcome.approval.expires_at,
    traceId: ctx.res.locals.traceId,
  };
  try {
    await deps.temporal.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      deps.temporal.workflow.start(MCP_TASK_WORKFLOW, {
        taskQueue: config.temporal.taskQueue,
        workflowId,
        args: [start],
        typedSearchAttributes: [
          { key: searchAttributes.environment, value: principal.caller.environmentName },
          { key: searchAttributes.agent, value: principal.caller.agentId },
          { key: searchAttributes.user, value: principal.userExternalId },
          { key: searchAttributes.action, value: outcome.action.id },
        ],
        staticSummary: `MCP task: ${outcome.action.id} for user ${principal.userExternalId}, agent ${principal.caller.agentId}`,
      }),
    );
  } catch (error) {
    // A start that did land meanwhile stamped the task: it is live, and the agent gets it.
    if (!(await abandonMcpTask(sql, taskId))) {
      ctx.req.log.info({ err: error }, 'an MCP task started after its start deadline');
      return heldTaskResult(task, pollIntervalMs, outcome.approval, outcome.action.id);
    }
    ctx.req.log.warn({ err: error }, 'an MCP task could not be started');
    throw new McpError(
      ErrorCode.InternalError,
      `The call is held for approval ${outcome.approval.id}, but Gatehouse could not start its ` +
        'task in time. Call the tool again as a task: it finds the same approval.',
    );
  }
  return heldTaskResult(task, pollIntervalMs, outcome.approval, outcome.action.id);
}

/** A held call's CreateTaskResult, with a sentence for the model. */
function heldTaskResult(
  task: McpTask,
  pollIntervalMs: number,
  approval: HeldApproval,
  action: string,
): CreateTaskResult {
  const view = created(task, pollIntervalMs, approval);
  return {
    task: view,
    _meta: {
      [MODEL_IMMEDIATE_RESPONSE]:
        `${action}: ${view.statusMessage ?? 'Held for approval.'} ` +
        'Do not call it again: this task’s result is the call’s answer once a person decides.',
    },
  };
}
