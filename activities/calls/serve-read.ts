import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  READ_ATTEMPTS,
  type CallRequest,
  type CallTicket,
  type Preparation,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import { finalForKey } from '../../workflows/call-answers.js';
import { settleFailure, settleOutcome } from '../../workflows/upstream-settlement.js';
import type { Settled } from '../../workflows/upstream-answer.js';
import { recordRunAudit, type AuditContext, type RunRecordDeps } from './call-records.js';
import type { UpstreamCall } from './upstream-request.js';

/**
 * How the one-step read ended. `prepared`: the policy did not simply allow it (or the user has
 * no usable connection), so the workflow goes on with the preparation as for any call.
 * `late`: allowed, but its caller had stopped waiting, so the app was not called. `served`:
 * the app was called and `settled` is the answer; `audited` says whether the caller's audit row
 * is written (if not, the workflow writes it, retrying until Postgres takes it).
 */
export type ReadStep =
  | { kind: 'prepared'; preparation: Preparation }
  | { kind: 'late'; preparation: Preparation & { ok: true } }
  | { kind: 'served'; preparation: Preparation & { ok: true }; settled: Settled; audited: boolean };

export interface ServeReadDeps extends RunRecordDeps {
  prepare: (call: CallRequest, requestIds: readonly string[], at?: number) => Promise<Preparation>;
  callUpstream: (call: UpstreamCall) => Promise<UpstreamOutcome>;
}

function retryable(error: unknown): boolean {
  return !(error instanceof ApplicationFailure && error.nonRetryable);
}

/**
 * An allowed read in one local activity: prepare (connection and policy), call the
 * app, write the first caller's audit row. Three local activities became one: a third fewer
 * history events and workflow-task round trips, the same guarantees. Reads may repeat, so a
 * failed attempt is tried again whole, as the separate read activity was; on the last attempt a
 * failure becomes its answer here, so the row is written with what the call met.
 */
export function serveReadActivity(deps: ServeReadDeps) {
  return async (call: CallRequest, first: CallTicket, at?: number): Promise<ReadStep> => {
    const preparation = await deps.prepare(call, [first.requestId], at);
    // Not served here when the first request was answered before (by an earlier run): the workflow
    // sees to it, and to whoever else came.
    const answeredBefore = preparation.answeredElsewhere?.[first.requestId] !== undefined;
    if (!preparation.ok || preparation.decision !== 'allow' || answeredBefore || preparation.kept)
      return { kind: 'prepared', preparation };
    // The API told this caller 503 once its deadline passed: the app must not be called for it.
    if (first.deadline !== undefined && Date.now() > first.deadline) {
      return { kind: 'late', preparation };
    }
    let settled: Settled;
    try {
      const outcome = await deps.callUpstream({
        connectionId: preparation.connectionId,
        target: call.target,
        environmentId: call.environmentId,
      });
      settled = settleOutcome(outcome, call.target, preparation);
    } catch (error) {
      if (retryable(error) && Context.current().info.attempt < READ_ATTEMPTS) throw error;
      settled = settleFailure(error, call.target);
    }
    const context: AuditContext = {
      connectedUserId: preparation.connectedUserId,
      connectionId: preparation.connectionId,
      policyId: preparation.policyId,
      policyVersion: preparation.policyVersion,
      grantId: preparation.grantId ?? null,
    };
    // Once the app has been called, a failed bookkeeping write must not fail the call (and call
    // the app again): the workflow writes the row instead.
    const audited = await recordRunAudit(
      deps,
      call,
      context,
      [
        {
          id: first.requestId,
          traceId: first.traceId,
          decision: settled.decision,
          reason: settled.reason,
          approvalId: null,
          response: settled.response,
        },
      ],
      finalForKey(settled) ? { answer: settled.answer, decision: settled.decision } : undefined,
    ).then(
      () => true,
      () => false,
    );
    return { kind: 'served', preparation, settled, audited };
  };
}
