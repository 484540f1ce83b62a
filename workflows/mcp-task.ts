/**
 * The workflow behind one MCP task: a task-augmented `tools/call` that was held for approval.
 * Its story:
 *
 *   held (the API made the first request and created the task) → stamp the task as started (a
 *     start the API gave up on finds no task, and ends here: the agent was told to call again)
 *     → wait for the approval, durably
 *     approved or rejected → request the call again: the held call workflow runs it, once (or
 *                            denies it); its answer is the task's result
 *     expired               → the task fails `approval_expired`: the call did not run
 *     cancelled             → the agent withdrew it (the API settled the task) or the user was
 *                             deleted (the task fails `approval_cancelled`)
 *
 * The governed call stays the call workflow's (`call/<env>/<action>/<fingerprint>`): this one only
 * speaks for the agent, so policy, approvals, four eyes, audit and idempotency are those of a
 * plain tool call. A task's result does not wait for anyone to poll: once approved, the call runs,
 * and the answer waits in Postgres for `tasks/result`. Its id is `mcp-task/<environment>/<task id>`.
 */
import { patched, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { decisionOf } from './approval-wait.js';
import type { McpTaskStart, McpTaskTicket } from './mcp-task-types.js';
import { workflowUuidV7 } from './nexus/workflow-uuid.js';

/**
 * A request to the call is bounded by the API's own deadlines (CallWorkflows); one that was not
 * answered in time is tried again, which the task's Idempotency-Key makes safe: a retry joins the
 * running call or gets the answer kept under the key. Recording the end is one statement.
 */
const { claimTask, runTaskCall, endTask } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function mcpToolTask(start: McpTaskStart): Promise<void> {
  const ticket = (): McpTaskTicket => ({ requestId: workflowUuidV7(), traceId: start.traceId });
  let { approvalId, expiresAt } = start;
  // Tasks started before the claim replay without it.
  if (patched('mcp-task-claimed-at-start') && !(await claimTask(start.taskId))) {
    setCurrentDetails(`Task ${start.taskId} was given up before this start; nothing runs.`);
    return;
  }
  for (;;) {
    setCurrentDetails(`Waiting for approval ${approvalId} until ${expiresAt}.`);
    const status = await decisionOf(approvalId, expiresAt);
    if (status === 'expired' || status === 'cancelled') {
      setCurrentDetails(`Approval ${approvalId} ${status}; the call did not run.`);
      await endTask(start.taskId, {
        kind: 'approval_ended',
        approvalId,
        status,
        at: status === 'expired' ? expiresAt : new Date().toISOString(),
      });
      return;
    }
    // Approved: the held call workflow runs it now, once. Rejected: it answers denied_by_policy.
    setCurrentDetails(`Approval ${approvalId} ${status}.`);
    const outcome = await runTaskCall(start, ticket());
    if (outcome.kind === 'held') {
      // The approval the call was held for had been used or lapsed: the call is held anew.
      ({ approvalId, expiresAt } = outcome);
      continue;
    }
    await endTask(start.taskId, { kind: 'call', answer: outcome.answer });
    return;
  }
}
