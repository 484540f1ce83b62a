import { ApplicationFailure } from '@temporalio/common';
import { ApiError } from '../../api/errors.js';
import { callWorkflowsFor, type GivenAnswer } from '../../api/temporal/call-workflows.js';
import type { CallAnswer } from '../../workflows/call-types.js';
import type {
  McpTaskCallOutcome,
  McpTaskStart,
  McpTaskTicket,
} from '../../workflows/mcp-task-types.js';
import { insertAuditEvents } from '../db/audit-events.js';
import { setMcpTaskApproval } from '../db/mcp-tasks.js';
import type { ActivityDeps } from '../deps.js';
import { liveCallerByKeyId } from '../nexus/nexus-caller.js';

/**
 * Refusals a retry may cure: the call was not taken in time, or its answer did not come back.
 * Retrying is safe because the task's call carries its Idempotency-Key: a retry joins the open
 * call, or gets the answer kept under the key, and the app is never called twice.
 */
const RETRYABLE = new Set(['service_unavailable', 'internal_error']);

function errorAnswer(error: ApiError): CallAnswer {
  const { code, message, ...fields } = error.toEnvelope().error;
  // `retryable` follows from the code when the answer is shaped again.
  const extra: Record<string, unknown> = { ...fields };
  delete extra.retryable;
  return { kind: 'error', code, message, extra };
}

/**
 * The task's request to its call once the approval is decided, through the very path of a plain
 * `tools/call` (CallWorkflows.run): the held call workflow runs it once, or answers its denial.
 * The key the agent called with is looked up first: a task outlives its request, and a key
 * revoked meanwhile refuses the run, as it would refuse the agent's own retry.
 */
export function runTaskCallActivity(deps: ActivityDeps) {
  // The API's own, so the run links its audit event and trace in the Temporal UI as any call's.
  const calls = callWorkflowsFor(deps);
  return async function runTaskCall(
    start: McpTaskStart,
    ticket: McpTaskTicket,
  ): Promise<McpTaskCallOutcome> {
    const { call } = start;
    const action = call.target.kind === 'action' ? call.target.action : `${call.target.app}.proxy`;
    const caller = await liveCallerByKeyId(deps.sql, start.keyId);
    if (!caller) {
      const message =
        'The API key this task was created with (directly or through its MCP session) has been ' +
        'revoked: the approved call did not run.';
      await insertAuditEvents(deps.sql, [
        {
          id: ticket.requestId,
          environmentId: call.environmentId,
          action,
          scope: call.target.scope,
          decision: 'denied',
          reason: `invalid_api_key: ${message}`,
          agentId: call.agentId,
          via: call.via,
          userExternalId: call.userExternalId,
          connectedUserId: null,
          connectionId: null,
          approvalId: null,
          request: { action, mcp_task: start.taskId },
          response: null,
          traceId: ticket.traceId,
          policyId: null,
          policyVersion: null,
        },
      ]);
      return {
        kind: 'answered',
        answer: { kind: 'error', code: 'invalid_api_key', message, extra: {} },
      };
    }
    let answer: GivenAnswer;
    try {
      answer = await calls.run(call, ticket);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (RETRYABLE.has(error.code)) throw ApplicationFailure.retryable(error.message, error.code);
      return { kind: 'answered', answer: errorAnswer(error) };
    }
    if (answer.kind === 'error' && answer.code === 'approval_required') {
      const approval = answer.extra.approval as { id: string; expires_at: string };
      await setMcpTaskApproval(deps.sql, start.taskId, approval.id);
      return { kind: 'held', approvalId: approval.id, expiresAt: approval.expires_at };
    }
    // A replay of the answer kept under the task's key is the task's answer all the same.
    const given: GivenAnswer = { ...answer };
    delete given.replayed;
    return { kind: 'answered', answer: given };
  };
}
