/**
 * What the API hands the workflow behind an MCP task, and what its activities answer. Definitions
 * only, so the API and the activities import them without the workflow's code.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CallAnswer, CallRequest } from './call-types.js';

export const MCP_TASK_WORKFLOW = 'mcpToolTask';

/** `mcp-task/<environment>/<task id>`: names the environment, as every call workflow's id does. */
export function mcpTaskWorkflowId(environmentName: string, taskId: string): string {
  return `mcp-task/${environmentName}/${taskId}`;
}

export interface McpTaskStart {
  taskId: string;
  /** The tool call as its first request made it, with the task's Idempotency-Key. */
  call: CallRequest;
  /** The key the agent called with (directly or through the MCP session it minted). */
  keyId: string;
  /** The approval the first request was held for. */
  approvalId: string;
  expiresAt: string;
  /** Every request of the task shares the first request's trace. */
  traceId: string;
}

/** One request of the task to its call: an Update on the call workflow and an audit row. */
export interface McpTaskTicket {
  /** UUIDv7 made by the workflow: stable across the activity's retries. */
  requestId: string;
  traceId: string;
}

/** What one request of the task to its call came to. */
export type McpTaskCallOutcome =
  | { kind: 'answered'; answer: CallAnswer }
  | { kind: 'held'; approvalId: string; expiresAt: string };

/**
 * What an ended task answers: the call's own answer; the approval's end when the call never ran
 * (expired undecided, or cancelled because its user was deleted); the agent's withdrawal
 * (`tasks/cancel`); or, for a task that ended as it was created, the tool result given then.
 */
export type McpTaskAnswer =
  | { kind: 'call'; answer: CallAnswer }
  | { kind: 'approval_ended'; approvalId: string; status: 'expired' | 'cancelled'; at: string }
  | { kind: 'withdrawn'; approvalId: string; at: string }
  | { kind: 'tool_result'; result: CallToolResult };
