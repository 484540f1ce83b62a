import { Context } from '@temporalio/activity';
import { callWorkflowsFor } from '../../api/temporal/call-workflows.js';
import type { ApprovalStatus } from '../../workflows/call-types.js';
import { findApprovalById } from '../db/approvals.js';
import type { ActivityDeps } from '../deps.js';

/** How long one attempt waits before it hands back to the workflow, which starts another. */
const ATTEMPT_MS = 5 * 60_000;
/** The longest one awaitDecision Update waits: the activity heartbeats and looks again after. */
const UPDATE_WAIT_MS = 60_000;
/**
 * How often the attempt heartbeats while an Update waits: well inside the workflow's 30 s
 * heartbeat timeout, and what lets a cancellation reach it (Temporal answers heartbeats with it).
 */
const HEARTBEAT_MS = 5_000;
/**
 * The pause before looking again when the call workflow answered without a decision before its
 * wait was up: it is ending the hold (an expiry, a cancellation) and Postgres will say how in a
 * moment, or Temporal did not answer.
 */
const SETTLING_MS = 1_000;

/**
 * Waits for a held call's approval to leave `pending`, for at most five minutes or until
 * `untilMs`, and says where it stands. The wait is the call workflow's own (its
 * `awaitDecision` Update, on the workflow clock, at most a minute per Update), so a decision is
 * noticed as the decide Update records it, and nothing polls: one approval read per Update (a
 * minute), none per second. An expiry or a cancellation ends the hold, which ends the Update;
 * Postgres then says which it was. The attempt heartbeats, so a worker that dies is replaced
 * within the heartbeat timeout and its successor sends a new Update; a cancellation of the
 * operation cancels the attempt, and the Update's RPC with it.
 */
export function awaitApprovalDecisionActivity(deps: ActivityDeps) {
  const calls = callWorkflowsFor(deps);
  return async function awaitApprovalDecision(
    approvalId: string,
    untilMs: number,
  ): Promise<ApprovalStatus> {
    const context = Context.current();
    const endsAt = Math.min(untilMs, Date.now() + ATTEMPT_MS);
    const beat = setInterval(() => {
      context.heartbeat();
    }, HEARTBEAT_MS);
    try {
      for (;;) {
        context.heartbeat();
        const approval = await findApprovalById(deps.sql, approvalId);
        if (!approval) throw new Error(`approval ${approvalId} not found`);
        if (approval.status !== 'pending' || Date.now() >= endsAt) return approval.status;
        const waitMs = Math.min(UPDATE_WAIT_MS, endsAt - Date.now());
        const askedAt = Date.now();
        const answer = await Promise.race([
          deps.temporal.withAbortSignal(context.cancellationSignal, () =>
            calls.awaitDecision(approval.workflowId, approvalId, waitMs),
          ),
          context.cancelled,
        ]);
        if (answer === 'approved' || answer === 'rejected') return answer;
        if (Date.now() - askedAt < waitMs) await context.sleep(SETTLING_MS);
      }
    } finally {
      clearInterval(beat);
    }
  };
}
