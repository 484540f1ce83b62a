/**
 * What the call workflow answers, in the error envelope, when the service itself stops or holds
 * a call, with what audit keeps of it. The app's own answers are mapped in upstream-answer.ts.
 */
import type { ApprovalView, KeptAnswer, Preparation } from './call-types.js';
import type { CallScope } from './catalog/index.js';
import type { Settled } from './upstream-answer.js';

/** No usable connection: `connection_required`, or `connection_expired` (the API adds the URL). */
export function answerStopped(preparation: Preparation & { ok: false }): Settled {
  return {
    answer:
      preparation.code === 'connection_required'
        ? {
            kind: 'error',
            code: 'connection_required',
            message: 'The user has no connection to this app; send them a connect link.',
            extra: {},
          }
        : {
            kind: 'error',
            code: 'connection_expired',
            message: "The user's connection has expired; they must reconnect.",
            extra: { connection_id: preparation.connectionId },
          },
    decision: 'failed',
    reason: preparation.code,
    response: null,
  };
}

export function answerDenied(policyId: string | null, reason: string): Settled {
  return {
    answer: {
      kind: 'error',
      code: 'denied_by_policy',
      message: `The policy denies this call (${reason}).`,
      extra: { policy: policyId },
    },
    decision: 'denied',
    reason,
    response: null,
  };
}

/**
 * An approved call that the policy in force when it runs denies: the approval was given under an
 * earlier version, and a newer one that denies the call wins.
 */
export function answerDeniedSinceApproval(
  approval: ApprovalView,
  policyId: string | null,
  reason: string,
): Settled {
  const why = `${reason}; approval ${approval.id} was given under policy ${approval.policy.id} v${String(approval.policy.version)}`;
  return {
    answer: {
      kind: 'error',
      code: 'denied_by_policy',
      message: `The policy now denies this call (${why}); its approval no longer applies.`,
      extra: { policy: policyId, approval: { id: approval.id, status: approval.status } },
    },
    decision: 'denied',
    reason: why,
    response: null,
  };
}

/** `approval_required`, naming the approval to wait for; the same for every caller while held. */
export function answerHeld(approval: ApprovalView, reason: string): Settled {
  return {
    answer: {
      kind: 'error',
      code: 'approval_required',
      message: `This call needs approval ${approval.id}; retry the same call once it is decided.`,
      extra: {
        approval: {
          id: approval.id,
          requested_from: approval.requested_from,
          status: approval.status,
          expires_at: approval.expires_at,
        },
      },
    },
    decision: 'blocked',
    reason: `requires approval (${reason})`,
    response: null,
  };
}

/** Until its expiry, a rejected approval denies the identical calls, naming itself. */
export function answerRejected(approval: ApprovalView): Settled {
  const by = approval.decided_by ? ` by ${approval.decided_by}` : '';
  return {
    answer: {
      kind: 'error',
      code: 'denied_by_policy',
      message: `Approval ${approval.id} was rejected${by}.`,
      extra: { approval: { id: approval.id, status: approval.status } },
    },
    decision: 'denied',
    reason: `approval ${approval.id} rejected`,
    response: null,
  };
}

export function answerTooLarge(upstreamStatus: number, limitBytes: number): Settled {
  return {
    answer: {
      kind: 'error',
      code: 'payload_too_large',
      message: `The app's response exceeds the limit of ${String(limitBytes)} bytes.`,
      extra: { upstream_status: upstreamStatus, limit_bytes: limitBytes },
    },
    decision: 'failed',
    reason: 'upstream response too large',
    response: { upstream_status: upstreamStatus, error: 'payload_too_large' },
  };
}

/**
 * The app answered, but with something no call can carry (`reason`): 503 `upstream_unavailable`,
 * as for an app whose answer was lost, saying why. Asking again gets the same answer, so the
 * call is not retried; a write was answered, so it may have happened.
 */
export function answerUnusable(upstreamStatus: number, reason: string, scope: CallScope): Settled {
  const writes = scope !== 'read';
  const uncertain = writes ? { write_may_have_happened: true } : {};
  return {
    answer: {
      kind: 'error',
      code: 'upstream_unavailable',
      message: writes
        ? `The app's answer could not be used (${reason}), and this call writes: the app may have carried it out. Check the app before sending it again (see write_may_have_happened).`
        : `The app's answer could not be used (${reason}).`,
      extra: { upstream_status: upstreamStatus, ...uncertain },
    },
    decision: 'failed',
    reason: `upstream answer unusable: ${reason}`,
    response: { upstream_status: upstreamStatus, error: 'upstream_unavailable', ...uncertain },
  };
}

export const ANSWER_INTERNAL_FAILURE: Settled = {
  answer: {
    kind: 'error',
    code: 'internal_error',
    message: 'The call failed inside Gatehouse; retry later.',
    extra: {},
  },
  decision: 'failed',
  reason: 'internal_error',
  response: null,
};

/** For callers who came to retry a call that ended without running (its user was deleted). */
export const ANSWER_ENDED: Settled = {
  answer: {
    kind: 'error',
    code: 'conflict',
    message: 'The call ended while this request waited for it; send it again.',
    extra: {},
  },
  decision: 'failed',
  reason: 'call ended before it ran',
  response: null,
};

/** The call did not start while a caller still waited for it: nothing reached the app. */
export const ANSWER_NOT_RUN: Settled = {
  answer: {
    kind: 'error',
    code: 'service_unavailable',
    message: 'Gatehouse could not start the call in time; it did not run. Send it again.',
    extra: { call_state: 'not_started', retry_after: '2' },
  },
  decision: 'failed',
  reason: 'service_unavailable: the call did not start in time',
  response: null,
};

/**
 * Whether an answer is the call's final one for its Idempotency-Key, kept and given again to every
 * retry with the key: the app's answer, a denial (by a rule or by a person), and a write that may
 * have happened. Not a held call, nor one the service stopped before the app (no connection, not
 * started, its own failure), nor an app failure that left nothing behind (rate limited, a request
 * that never left): a retry with the key runs those anew.
 */
export function finalForKey(settled: Settled): boolean {
  switch (settled.decision) {
    case 'allowed':
    case 'denied':
      return true;
    case 'blocked':
      return false;
    case 'failed':
      return (
        settled.response !== null &&
        (settled.response.write_may_have_happened === true ||
          settled.response.error === 'payload_too_large')
      );
  }
}

/** A retry with the call's Idempotency-Key, answered with the answer kept for it. */
export function answerKept(kept: KeptAnswer): Settled {
  return {
    answer: kept.answer,
    decision: kept.decision,
    reason: `replayed: the answer of audit event ${kept.auditEventId} (Idempotency-Key)`,
    response: kept.response,
  };
}

/**
 * A remote MCP server answered 403 `insufficient_scope`: the user must re-authorize with the wider
 * scope, which the connection's reconnect link now asks for (the API adds it). The server did
 * nothing; the connection stays active for what its grant allows.
 */
export function answerScopeRequired(connectionId: string | null, scope: string): Settled {
  return {
    answer: {
      kind: 'error',
      code: 'connection_scope_required',
      message: `The app needs a permission the user has not granted (scope "${scope}"): they must reconnect through reconnect_url to grant it.`,
      extra: { connection_id: connectionId, scope },
    },
    decision: 'failed',
    reason: 'connection_scope_required',
    response: { upstream_status: 403, error: 'insufficient_scope' },
  };
}

/**
 * The authorization server refused the operator's MCP OAuth client as `invalid_client` at a
 * refresh: the operator fixes the client; the connection is unchanged.
 */
export function answerClientRefused(
  app: string,
  refused: { mcpOAuthClientId: string; clientId: string },
): Settled {
  const id = refused.mcpOAuthClientId;
  return {
    answer: {
      kind: 'error',
      code: 'auth_config_required',
      message: `The authorization server of ${app} refused MCP OAuth client ${id} (client_id ${refused.clientId}) as invalid_client: check its secret (POST /v1/mcp-oauth-clients/${id}/rotate) and its registration at the server.`,
      extra: { mcp_oauth_client_id: id },
    },
    decision: 'failed',
    reason: 'auth_config_required: MCP OAuth client refused',
    response: null,
  };
}
