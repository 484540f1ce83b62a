import { setTimeout as sleep } from 'node:timers/promises';
import { recordJoinedAudit } from '../../activities/calls/joined-audit.js';
import { findApproval } from '../../activities/db/approvals.js';
import type { Sql } from '../../infra/database/client.js';
import type { ApprovalStatus, CallRequest, CallTicket } from '../../workflows/call-types.js';
import type { GivenAnswer } from './given-answer.js';

/**
 * What waiting needs of `CallWorkflows`, which owns the waiting: declared here rather than
 * imported, so the two modules do not import each other.
 */
export interface HeldCallRunner {
  run(call: CallRequest, ticket: CallTicket): Promise<GivenAnswer>;
  awaitDecision(
    workflowId: string,
    approvalId: string,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<ApprovalStatus | 'ended' | 'unknown'>;
}

/** The approval a held answer names, or null when the answer is not `approval_required`. */
export function heldApprovalId(answer: GivenAnswer): string | null {
  if (answer.kind !== 'error' || answer.code !== 'approval_required') return null;
  const approval = answer.extra.approval as { id?: unknown } | undefined;
  return typeof approval?.id === 'string' ? approval.id : null;
}

/** What the callers waiting on one approval in this process share: one wait, then one run. */
interface SharedWait {
  /** True once the approval is decided; false when the wait ended without a decision. */
  decided: Promise<boolean>;
  /** The callers on it now: the wait ends with the last (see `leave`). */
  callers: number;
  end: AbortController;
  /** The retry after the decision, sent by the first caller still waiting then. */
  run?: Promise<{ answer: GivenAnswer; requestId: string }>;
}

/**
 * `Prefer: wait` on governed calls. A held call's callers wait in the call workflow (the
 * `awaitDecision` Update, on the workflow's clock) and, once it is decided, the call is sent
 * again as an identical retry would be: it runs once, in the workflow that held it. However many
 * callers wait on one approval, this process sends one awaitDecision and one retry: Temporal
 * admits ten Updates at a time per workflow, and the decision itself needs one. The others get
 * its answer, each audited as having waited with that request.
 *
 * The retry goes out only for a caller still connected: never for one already answered, nor for
 * one that hung up, so nothing is written behind a caller's back. An approved call nobody is
 * waiting for stays in its workflow until the caller's own identical retry runs it, so one
 * approval never leads to two writes. (A caller that hangs up while its approved call is already
 * running is in the place of any caller that hangs up mid-request: an Idempotency-Key is what
 * makes its retry get the first answer again.)
 */
export class WaitingCalls {
  private readonly shared = new Map<string, SharedWait>();

  constructor(
    private readonly calls: HeldCallRunner,
    private readonly sql: Sql,
    /** The longest wait one awaitDecision asks for: the most a caller may prefer. */
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Runs the call and, while it is held, waits for the decision until `untilMs` (epoch ms);
   * answers the run after the decision, or the held answer when the wait ends first.
   */
  async run(
    call: CallRequest,
    ticket: () => CallTicket,
    untilMs: number,
    gone: AbortSignal,
  ): Promise<GivenAnswer> {
    let answer = await this.calls.run(call, ticket());
    for (;;) {
      const approvalId = heldApprovalId(answer);
      if (approvalId === null || Date.now() >= untilMs || gone.aborted) return answer;
      const next = await this.afterDecision(call, approvalId, ticket(), untilMs, gone);
      // The wait ended, the approval is gone, or Temporal did not answer: the held answer stands.
      if (next === null) return answer;
      answer = next;
    }
  }

  /**
   * Joins (or starts) this process's wait on the approval; null when it ends undecided or the
   * caller hangs up first.
   */
  private async afterDecision(
    call: CallRequest,
    approvalId: string,
    ticket: CallTicket,
    untilMs: number,
    gone: AbortSignal,
  ): Promise<GivenAnswer | null> {
    let wait = this.shared.get(approvalId);
    if (!wait) {
      const end = new AbortController();
      const decided = this.awaitDecision(call, approvalId, end.signal);
      const started: SharedWait = { decided, callers: 0, end };
      wait = started;
      this.shared.set(approvalId, started);
      // Callers arriving after the decision retry as any caller would.
      void decided.finally(() => {
        if (this.shared.get(approvalId) === started) this.shared.delete(approvalId);
      });
    }
    wait.callers += 1;
    const timer = new AbortController();
    const stopWaiting = () => {
      timer.abort();
    };
    gone.addEventListener('abort', stopWaiting, { once: true });
    let decided: boolean;
    try {
      decided = await Promise.race([
        wait.decided,
        sleep(Math.max(0, untilMs - Date.now()), false, { signal: timer.signal }).catch(
          () => false,
        ),
      ]);
    } finally {
      gone.removeEventListener('abort', stopWaiting);
      timer.abort();
      this.leave(approvalId, wait);
    }
    if (!decided || gone.aborted) return null;
    wait.run ??= this.calls
      .run(call, ticket)
      .then((answer) => ({ answer, requestId: ticket.requestId }));
    const outcome = await wait.run;
    if (outcome.requestId !== ticket.requestId) {
      await recordJoinedAudit(this.sql, ticket, outcome.requestId);
    }
    return outcome.answer;
  }

  /**
   * A caller is done waiting. The last one ends the wait in the workflow: an Update and its
   * result's long poll left running for no one would hold one of the workflow's Update slots,
   * and a call open on the API's Temporal connection, for up to `maxWaitMs`.
   */
  private leave(approvalId: string, wait: SharedWait): void {
    wait.callers -= 1;
    if (wait.callers > 0) return;
    if (this.shared.get(approvalId) === wait) this.shared.delete(approvalId);
    wait.end.abort();
  }

  /** This process's one wait in the workflow holding the approval. Never rejects. */
  private async awaitDecision(
    call: CallRequest,
    approvalId: string,
    signal: AbortSignal,
  ): Promise<boolean> {
    try {
      const approval = await findApproval(this.sql, call.environmentId, approvalId);
      if (!approval || signal.aborted) return false;
      const status = await this.calls.awaitDecision(
        approval.workflowId,
        approvalId,
        this.maxWaitMs,
        signal,
      );
      return status === 'approved' || status === 'rejected';
    } catch {
      // Postgres or Temporal failing: the held answer stands, as when the wait runs out.
      return false;
    }
  }
}
