import { ApprovalRequiredError } from './error-classes.js';
import type { ApprovalStatus } from './gatehouse-error.js';
import { backoffMs, sleep } from './transport.js';

/** What reading an approval told: its status, and whether the server waited as asked. */
export interface ApprovalRead {
  status: ApprovalStatus;
  waited: boolean;
}

export interface WaitForDecision<T> {
  /**
   * Sends the call once, always with the same Idempotency-Key, asking the server to hold the
   * answer up to `waitSeconds` for a person's decision (null: do not wait). Answers when the call
   * ran; throws ApprovalRequiredError while it is held.
   */
  send(waitSeconds: number | null): Promise<T>;
  /** Reads the approval, asking the server to answer once it is decided, up to `waitSeconds`. */
  readApproval(id: string, waitSeconds: number): Promise<ApprovalRead | null>;
  waitMs: number;
  signal?: AbortSignal | undefined;
}

/** An answer that came this soon did not really wait, whatever its headers say. */
const WAITED_AT_LEAST_MS = 1_000;

/** Whether the answer says the server honoured `Prefer: wait` (RFC 7240 `Preference-Applied`). */
export function waitApplied(headers: Headers): boolean {
  return /(^|[,\s])wait=\d+/i.test(headers.get('preference-applied') ?? '');
}

const secondsUntil = (deadline: number) => Math.max(1, Math.ceil((deadline - Date.now()) / 1000));

/**
 * Sends a held call until it is decided or `waitMs` has passed, without a webhook receiver and
 * without the caller polling:
 *
 * - each send asks the server to wait on the call itself (`Prefer: wait`); a server that
 *   honours it answers when the call is decided (the result, or `denied_by_policy`), or at its
 *   own bound with `approval_required`, and the call is sent again at once;
 * - a server that answers at once (it ignores `Prefer`, which RFC 7240 allows) is not asked the
 *   call again and again: the client waits on the approval record (`GET /v1/approvals/{id}`,
 *   with `Prefer: wait` too, else polled with a backoff from 0.5 s doubling to 5 s), then sends
 *   the call once more to get its result, which ran once, in the waiting workflow;
 * - when the time is up, the last ApprovalRequiredError is thrown, with the approval to wait on
 *   later; a rejection throws DeniedByPolicyError from the send.
 */
export async function sendUntilDecided<T>(wait: WaitForDecision<T>): Promise<T> {
  const deadline = Date.now() + wait.waitMs;
  // Backoff grows across the whole wait, never restarting at 0.5 s.
  let polls = 0;
  for (;;) {
    const started = Date.now();
    const remaining = deadline - started;
    try {
      return await wait.send(remaining > 0 ? secondsUntil(deadline) : null);
    } catch (error) {
      if (!(error instanceof ApprovalRequiredError) || Date.now() >= deadline) throw error;
      const waited = waitApplied(error.headers) && Date.now() - started >= WAITED_AT_LEAST_MS;
      if (!waited) polls = await untilDecided(wait, error.approval.id, deadline, polls);
    }
  }
}

/** Waits until the approval is no longer pending, or the deadline; answers the polls made so far. */
async function untilDecided<T>(
  wait: WaitForDecision<T>,
  approvalId: string,
  deadline: number,
  polls: number,
): Promise<number> {
  while (Date.now() < deadline) {
    const started = Date.now();
    const read = await wait.readApproval(approvalId, secondsUntil(deadline));
    if (read !== null && read.status !== 'pending') return polls;
    if (read?.waited && Date.now() - started >= WAITED_AT_LEAST_MS) continue;
    await sleep(Math.min(backoffMs(polls++), Math.max(0, deadline - Date.now())), wait.signal);
    // The approval could not be read (a key without approvals:read): the call itself tells.
    if (read === null) return polls;
  }
  return polls;
}
