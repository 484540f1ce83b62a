import type { Db } from '../../infra/database/client.js';
import type { CallRequest, CallTicket, KeptAnswer } from '../../workflows/call-types.js';
import { answerKept } from '../../workflows/call-answers.js';
import { recordCallAudit } from './call-records.js';

/**
 * The audit row of a retry answered with the answer kept under its Idempotency-Key:
 * what the kept answer's own row said (decision, approval, response), as a replay of it, with
 * this request's trace id. The app was not called.
 */
export async function recordReplayAudit(
  sql: Db,
  call: CallRequest,
  ticket: CallTicket,
  kept: KeptAnswer,
): Promise<void> {
  const replay = answerKept(kept);
  await recordCallAudit(
    sql,
    call,
    { connectedUserId: null, connectionId: null, policyId: null, policyVersion: null },
    [
      {
        id: ticket.requestId,
        traceId: ticket.traceId,
        decision: replay.decision,
        reason: replay.reason,
        approvalId: kept.approvalId,
        response: replay.response,
      },
    ],
  );
}
