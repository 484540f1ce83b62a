/**
 * The workflow behind one `gatehouse.runAction` Nexus operation. Its story:
 *
 *   request the call (as a REST run would) → ran, refused or denied → the operation's outcome
 *                                          → held → wait for the approval, durably
 *     approved or rejected → request it again: the held call workflow runs it, once (or denies it)
 *     expired               → fails `approval_expired`
 *     cancelled             → fails `approval_cancelled` (the user was deleted)
 *   the caller cancels while it waits → the approval is cancelled, the call never runs
 *
 * The governed call itself stays the call workflow's (`call/<env>/<action>/<fingerprint>`): this
 * one only speaks for the caller, so policy, approvals, four eyes, audit and idempotency are
 * those of REST. Its id is `nexus/<environment>/<operation request id>`.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { decisionOf } from '../approval-wait.js';
import type { ApprovalStatus } from '../call-types.js';
import type { RunActionResult } from './gatehouse-service.js';
import type {
  NexusCallOutcome,
  NexusErrorEnvelope,
  NexusRunStart,
  NexusTicket,
} from './run-action-types.js';
import { workflowUuidV7 } from './workflow-uuid.js';

/**
 * A request to the call is bounded by the API's own deadlines (CallWorkflows); one that was not
 * answered in time is tried again, which the call's Idempotency-Key makes safe.
 */
const { runNexusCall, cancelNexusCall } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

function fail(failure: NexusErrorEnvelope): never {
  throw ApplicationFailure.create({
    type: failure.error.code,
    message: failure.error.message,
    nonRetryable: true,
    details: [failure],
  });
}

function approvalEnded(
  approvalId: string,
  status: 'expired' | 'cancelled',
  expiresAt: string,
): never {
  const why =
    status === 'expired'
      ? `was not decided before it expired at ${expiresAt}`
      : 'was cancelled (the user was deleted)';
  fail({
    error: {
      code: status === 'expired' ? 'approval_expired' : 'approval_cancelled',
      message: `Approval ${approvalId} ${why}; the call did not run.`,
      retryable: false,
      approval: { id: approvalId, status },
    },
  });
}

export async function nexusRunAction(start: NexusRunStart): Promise<RunActionResult> {
  // Every audit row of the operation shares one trace id: the Nexus request id's hex digits.
  const hex = start.operationRequestId.replace(/-/g, '').toLowerCase();
  const traceId = /^[0-9a-f]{32}$/.test(hex) ? hex : workflowUuidV7().replace(/-/g, '');
  const ticket = (): NexusTicket => ({ requestId: workflowUuidV7(), traceId });
  // A request to the call is never cut short by a cancellation: it may be opening the approval
  // the cancellation must then cancel, or running the approved call, which must finish.
  const request = (): Promise<NexusCallOutcome> =>
    CancellationScope.nonCancellable(() => runNexusCall(start, ticket()));

  let outcome = await request();
  for (;;) {
    if (outcome.kind === 'done') return outcome.result;
    if (outcome.kind === 'failed') fail(outcome.failure);
    const { approvalId, expiresAt } = outcome;
    setCurrentDetails(`Waiting for approval ${approvalId} until ${expiresAt}.`);
    let status: ApprovalStatus;
    try {
      status = await decisionOf(approvalId, expiresAt);
      // Cancelled while the decision came in: the call must not run now either.
      if (CancellationScope.current().consideredCancelled) {
        throw new CancelledFailure('the operation was cancelled');
      }
    } catch (error) {
      if (!isCancellation(error)) throw error;
      setCurrentDetails(`Cancelled by the caller; approval ${approvalId} cancelled.`);
      await CancellationScope.nonCancellable(() => cancelNexusCall(approvalId, ticket()));
      throw error;
    }
    if (status === 'expired' || status === 'cancelled') {
      approvalEnded(approvalId, status, expiresAt);
    }
    // Approved: the held call workflow runs it now, once. Rejected: it answers denied_by_policy.
    setCurrentDetails(`Approval ${approvalId} ${status}.`);
    outcome = await request();
  }
}
