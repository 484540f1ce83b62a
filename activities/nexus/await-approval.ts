import { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../../infra/database/client.js';
import type { ApprovalStatus } from '../../workflows/call-types.js';
import { findApprovalById } from '../db/approvals.js';

/** How often a waiting operation reads its approval: a decision is noticed within this. */
const POLL_MS = 1000;
/** How long one attempt waits before it hands back to the workflow, which starts another. */
const ATTEMPT_MS = 5 * 60_000;

/**
 * Waits for a held call's approval to leave `pending`, for at most five minutes or until
 * `untilMs`, and says where it stands. One primary-key read a second, inside Gatehouse's worker:
 * the caller's workflow does not poll, and the waiting workflow's history grows by one activity
 * per five minutes (about 300 for a day-long approval) instead of a timer and a read every few
 * seconds. The attempt heartbeats, so a worker that dies is replaced within the heartbeat
 * timeout, and a worker that stops cancels it at once.
 */
export function awaitApprovalDecisionActivity(deps: { sql: Sql }) {
  return async function awaitApprovalDecision(
    approvalId: string,
    untilMs: number,
  ): Promise<ApprovalStatus> {
    const context = Context.current();
    const endsAt = Math.min(untilMs, Date.now() + ATTEMPT_MS);
    for (;;) {
      const approval = await findApprovalById(deps.sql, approvalId);
      if (!approval) throw new Error(`approval ${approvalId} not found`);
      if (approval.status !== 'pending' || Date.now() >= endsAt) return approval.status;
      context.heartbeat();
      await sleep(POLL_MS, undefined, { signal: context.cancellationSignal });
    }
  };
}
