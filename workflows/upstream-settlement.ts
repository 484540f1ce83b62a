/**
 * How an attempt to call the app ends for its callers: the app's outcome, or the failure of the
 * attempt, becomes one Settled answer. Pure, so the workflow and the one-step read activity
 * (activities/calls/serve-read.ts) settle a call exactly alike.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type CallTargetInput,
  type Preparation,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from './call-types.js';
import {
  ANSWER_INTERNAL_FAILURE,
  ANSWER_NOT_RUN,
  answerClientRefused,
  answerScopeRequired,
  answerStopped,
  answerTooLarge,
  answerUnusable,
} from './call-answers.js';
import {
  settleAction,
  settleProxy,
  upstreamFailure,
  withWriteUncertainty,
  type Settled,
} from './upstream-answer.js';

/** The app's outcome, as the call's callers get it. */
export function settleOutcome(
  result: UpstreamOutcome,
  target: CallTargetInput,
  preparation: Preparation & { ok: true },
): Settled {
  switch (result.kind) {
    case 'connection':
      // The token could not be refreshed because the app's token endpoint is down.
      if (result.status === 'unavailable') {
        const settled = upstreamFailure('upstream_unavailable', 503);
        return withWriteUncertainty(settled, target.scope, false);
      }
      return answerStopped({
        ok: false,
        code: result.status === 'expired' ? 'connection_expired' : 'connection_required',
        connectedUserId: preparation.connectedUserId,
        connectionId: preparation.connectionId,
      });
    case 'too_large':
      return answerTooLarge(result.status, result.limitBytes);
    case 'reauthorize':
      return answerScopeRequired(preparation.connectionId, result.scope);
    case 'client_refused':
      return answerClientRefused(target.app, result);
    case 'unusable':
      return answerUnusable(result.status, result.reason, target.scope);
    case 'response': {
      const settled = target.kind === 'proxy' ? settleProxy(result) : settleAction(result);
      // The app answered 502 or 504 itself: a gateway that may have passed the write on.
      return withWriteUncertainty(settled, target.scope, result.status !== 503);
    }
  }
}

/**
 * A failed attempt, as its callers get it. A regular activity's failure comes wrapped in an
 * ActivityFailure; a local one's does not. Anything else (an activity failing for reasons of
 * ours) is answered as internal_error.
 */
export function settleFailure(error: unknown, target: CallTargetInput): Settled {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  // No worker took the write before its callers' deadline: it was never sent. Unless an earlier
  // attempt ran (a remote tool's write is attempted again after a lost worker): its heartbeat
  // details came with the timeout, and the write may have happened.
  if (
    cause instanceof TimeoutFailure &&
    cause.timeoutType === 'SCHEDULE_TO_START' &&
    cause.lastHeartbeatDetails === undefined
  ) {
    return ANSWER_NOT_RUN;
  }
  // Whether the request may have reached the app; a lost worker's write may have.
  const sent =
    cause instanceof ApplicationFailure
      ? ((cause.details?.[0] as UpstreamFailureDetails | undefined)?.sent ?? true)
      : true;
  if (cause instanceof ApplicationFailure && cause.type === UPSTREAM_TIMEOUT) {
    return withWriteUncertainty(upstreamFailure('upstream_timeout', 504), target.scope, sent);
  }
  if (cause instanceof ApplicationFailure && cause.type === UPSTREAM_UNREACHABLE) {
    return withWriteUncertainty(upstreamFailure('upstream_unavailable', 503), target.scope, sent);
  }
  if (cause instanceof TimeoutFailure) {
    return withWriteUncertainty(upstreamFailure('upstream_timeout', 504), target.scope, true);
  }
  return ANSWER_INTERNAL_FAILURE;
}
