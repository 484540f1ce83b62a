import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type GetTaskPayloadRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { taskAnswer, type McpTaskWithApproval } from '../../../activities/db/mcp-tasks.js';
import { findEnvironmentAction } from '../../../activities/apps/directory.js';
import { mcpTaskResultsWaiting } from '../../../infra/telemetry/metrics.js';
import { resultOf, type ToolCallContext } from '../tool-call.js';
import { toolResult } from '../tool-results.js';
import type { ToolCallExtra } from '../url-elicitation.js';
import { taskNotFound, type McpTaskStore } from './task-store.js';
import { taskView } from './task-view.js';
import type { TaskWaiters } from './task-waiters.js';

/** The tool result of an ended task: exactly what the plain `tools/call` would have answered. */
async function endedResult(
  ctx: ToolCallContext,
  task: McpTaskWithApproval,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  const answer = taskAnswer(ctx.deps.config.encryption, task);
  const message = task.statusMessage ?? '';
  switch (answer.kind) {
    case 'tool_result':
      return answer.result;
    case 'call': {
      const action = await findEnvironmentAction(
        ctx.deps.sql,
        ctx.principal.caller.environmentId,
        task.action,
      );
      if (action) return resultOf(ctx, action, answer.answer, extra);
      // The app was removed since: its answer, without what naming the app would add.
      return toolResult(
        answer.answer.kind === 'json'
          ? (answer.answer.body as Record<string, unknown>)
          : { error: { code: 'not_found', message, retryable: false } },
        { message, isError: task.status !== 'completed' },
      );
    }
    case 'approval_ended':
    case 'withdrawn': {
      // As a Nexus operation whose approval ended names it: a plain caller would meet a new
      // approval on its retry, a task ends with its own.
      const status = answer.kind === 'withdrawn' ? 'cancelled' : answer.status;
      return toolResult(
        {
          error: {
            code: status === 'expired' ? 'approval_expired' : 'approval_cancelled',
            message,
            retryable: false,
            approval: { id: answer.approvalId, status },
          },
        },
        { message, isError: true },
      );
    }
  }
}

/**
 * `tasks/result`: the ended task's result at once; for a working task the request waits for its
 * end (heard from Postgres, task-waiters.ts) up to MCP_TASK_RESULT_WAIT_SECONDS, or until the
 * client gives up. The protocol would have it wait until the end, however long a person takes;
 * every request here is answered in bounded time, so at the bound it answers -32001 (request
 * timeout) saying the task still works, and the client asks again or polls `tasks/get`. A task
 * that ends while its result is awaited is announced first (`notifications/tasks/status`, on this
 * request's stream: a stateless server has no other).
 */
export function taskResultHandler(
  ctx: ToolCallContext,
  store: McpTaskStore,
  waiters: TaskWaiters,
): (
  request: GetTaskPayloadRequest,
  extra: ToolCallExtra,
) => Promise<CallToolResult & { _meta: Record<string, unknown> }> {
  const { resultWaitSeconds, pollIntervalMs } = ctx.deps.config.mcp.tasks;
  return async (request, extra) => {
    const { taskId } = request.params;
    const until = Date.now() + resultWaitSeconds * 1000;
    let waited = false;
    for (;;) {
      const watch = waiters.watch(taskId, until, extra.signal);
      let task: McpTaskWithApproval | null;
      try {
        // Woken together, the requests of one owner share one read of the task.
        task = await waiters.readOnce(`${store.ownerKey}\u0000${taskId}`, watch.since, () =>
          store.find(taskId),
        );
      } catch (error) {
        watch.stop();
        throw error;
      }
      if (!task) {
        watch.stop();
        throw taskNotFound();
      }
      if (task.status !== 'working') {
        watch.stop();
        if (waited) {
          await extra
            .sendNotification({
              method: 'notifications/tasks/status',
              params: taskView(task, pollIntervalMs),
            })
            .catch(() => undefined);
        }
        const result = await endedResult(ctx, task, extra);
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      }
      if (Date.now() >= until || extra.signal.aborted) {
        watch.stop();
        throw new McpError(
          ErrorCode.RequestTimeout,
          `Task ${taskId} is still working after ${String(resultWaitSeconds)} s ` +
            `(${taskView(task, pollIntervalMs).statusMessage ?? 'working'}). Ask for its result ` +
            'again, or poll tasks/get.',
        );
      }
      waited = true;
      mcpTaskResultsWaiting.inc();
      try {
        await watch.changed;
      } finally {
        mcpTaskResultsWaiting.dec();
      }
    }
  };
}
