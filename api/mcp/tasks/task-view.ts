import type { Task } from '@modelcontextprotocol/sdk/types.js';
import type { McpTaskWithApproval } from '../../../activities/db/mcp-tasks.js';

/** Who decides, in words for the model: never the agent itself. */
function askedOf(requestedFrom: string[] | null): string {
  return requestedFrom && requestedFrom.length > 0
    ? `a person asked by the policy (${requestedFrom.map((who) => `"${who}"`).join(', ')}) decides it`
    : 'any person who may decide approvals, not this agent, decides it';
}

/**
 * What a working task is doing, from its approval. Never a decision link: a task's status
 * reaches the agent, and an agent never decides its own calls.
 */
function workingMessage(task: McpTaskWithApproval): string {
  const id = task.approvalId ?? '';
  switch (task.approvalStatus) {
    case 'pending':
      return (
        `Held for approval ${id}: ${askedOf(task.approvalRequestedFrom)}, until ` +
        `${task.approvalExpiresAt?.toISOString() ?? 'it expires'}. Nothing has been sent to the ` +
        'app; once approved, the call runs once and its answer is this task’s result.'
      );
    case 'approved':
      return `Approval ${id} approved: the call is running, once.`;
    case 'rejected':
      return `Approval ${id} rejected: the task is ending.`;
    case 'expired':
    case 'cancelled':
      return `Approval ${id} ${task.approvalStatus}: the task is ending; the call did not run.`;
    default:
      return 'Working.';
  }
}

/** The task as the protocol shows it (`tasks/get`, `tasks/list`, `tasks/cancel`). */
export function taskView(task: McpTaskWithApproval, pollIntervalMs: number): Task {
  const working = task.status === 'working';
  return {
    taskId: task.id,
    status: task.status,
    statusMessage: working ? workingMessage(task) : (task.statusMessage ?? undefined),
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.lastUpdatedAt.toISOString(),
    ttl: task.ttlMs,
    ...(working ? { pollInterval: pollIntervalMs } : {}),
  };
}
