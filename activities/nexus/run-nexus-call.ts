import { ApplicationFailure } from '@temporalio/common';
import { callAnswerError } from '../../api/calls/call-answer.js';
import { ApiError } from '../../api/errors.js';
import { callWorkflowsFor } from '../../api/temporal/call-workflows.js';
import type {
  NexusCallOutcome,
  NexusRunStart,
  NexusTicket,
} from '../../workflows/nexus/run-action-types.js';
import type { RunActionResult } from '../../workflows/nexus/gatehouse-service.js';
import type { ActivityDeps } from '../deps.js';
import { nexusCallRequest } from './nexus-call-request.js';

/**
 * Refusals a retry may cure: the call was not taken in time, or its answer did not come back.
 * Retrying is safe because the operation's call carries its Idempotency-Key: a retry joins the
 * open call, or gets the answer kept under the key, and the app is never called twice.
 */
const RETRYABLE = new Set(['service_unavailable', 'internal_error']);

function outcomeOfError(error: ApiError): NexusCallOutcome {
  if (RETRYABLE.has(error.code)) {
    throw ApplicationFailure.retryable(error.message, error.code);
  }
  return { kind: 'failed', failure: error.toEnvelope() };
}

/**
 * One request of a `runAction` operation to its governed call, through the very path of
 * `POST /v1/actions/{action}/run` (CallWorkflows.run): policy, approvals, four eyes, audit and
 * idempotency are the REST call's own. The workflow makes the ticket, so the activity's retries
 * are one request (one Update id, one audit row).
 */
export function runNexusCallActivity(deps: ActivityDeps) {
  // The API's own, so a call a Nexus operation starts links its audit event and trace in the
  // Temporal UI as a REST call's does.
  const calls = callWorkflowsFor(deps);
  return async function runNexusCall(
    start: NexusRunStart,
    ticket: NexusTicket,
  ): Promise<NexusCallOutcome> {
    try {
      const call = await nexusCallRequest(deps, start, ticket);
      const answer = await calls.run(call, ticket);
      if (answer.kind === 'json') return { kind: 'done', result: answer.body as RunActionResult };
      if (answer.kind === 'passthrough') {
        // Actions answer JSON; only the proxy passes bytes through, and Nexus runs no proxy call.
        throw ApplicationFailure.nonRetryable(
          'an action answered with raw bytes',
          'internal_error',
        );
      }
      if (answer.code === 'approval_required') {
        const approval = answer.extra.approval as { id: string; expires_at: string };
        return { kind: 'held', approvalId: approval.id, expiresAt: approval.expires_at };
      }
      return outcomeOfError(
        await callAnswerError(answer, { ...deps, environmentId: call.environmentId }),
      );
    } catch (error) {
      if (error instanceof ApiError) return outcomeOfError(error);
      throw error;
    }
  };
}
