import type { Response } from 'express';
import { v7 as uuidv7 } from 'uuid';
import { findConnection } from '../../activities/db/connections.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { CallAnswer, CallRequest } from '../../workflows/call-types.js';
import { connectionExpiredError, reconnectLinkFor } from '../connect/links.js';
import { ApiError } from '../errors.js';
import { callerGone } from '../http/caller-gone.js';
import { applyWaitPreference, honouredWaitSeconds } from '../http/prefer.js';
import type { CallWorkflows, GivenAnswer } from '../temporal/call-workflows.js';
import { heldApprovalId } from '../temporal/waiting-calls.js';

/**
 * The envelope error of a call workflow's error answer. `connection_expired` gains its reconnect
 * URL here, so link tokens never pass through Temporal.
 */
export async function callAnswerError(
  answer: Extract<CallAnswer, { kind: 'error' }>,
  deps: { sql: Sql; config: Config; environmentId: string },
): Promise<ApiError> {
  const extra = { ...answer.extra };
  const headers: Record<string, string> = {};
  if (answer.code === 'connection_expired' && typeof extra.connection_id === 'string') {
    const connection = await findConnection(deps.sql, deps.environmentId, extra.connection_id);
    if (connection?.status === 'expired') {
      return connectionExpiredError(deps.sql, deps.config, connection);
    }
  }
  // The reconnect link asks for the wider scope an MCP server wants.
  if (answer.code === 'connection_scope_required' && typeof extra.connection_id === 'string') {
    const connection = await findConnection(deps.sql, deps.environmentId, extra.connection_id);
    if (connection) {
      extra.reconnect_url = (await reconnectLinkFor(deps.sql, deps.config, connection)).url;
    }
  }
  if (typeof extra.retry_after === 'string') headers['Retry-After'] = extra.retry_after;
  return new ApiError(answer.code, answer.message, extra, headers);
}

/** Turns a call workflow's answer into the HTTP response; errors go through the one envelope. */
async function sendCallAnswer(
  res: Response,
  answer: GivenAnswer,
  deps: { sql: Sql; config: Config; environmentId: string },
): Promise<void> {
  // The answer kept under the request's Idempotency-Key, as management POSTs say it.
  if (answer.replayed) res.set('Idempotent-Replayed', 'true');
  switch (answer.kind) {
    case 'json':
      res.status(answer.status).json(answer.body);
      return;
    case 'passthrough':
      res.status(answer.status).set(answer.headers).send(Buffer.from(answer.bodyBase64, 'base64'));
      return;
    case 'error':
      throw await callAnswerError(answer, deps);
  }
}

/**
 * Runs the call through its workflow. The request's id (UUIDv7) is the Update id and the audit
 * event id (see CallTicket).
 */
export function answerCall(
  calls: CallWorkflows,
  call: CallRequest,
  traceId: string,
): Promise<GivenAnswer> {
  return calls.run(call, { requestId: uuidv7(), traceId });
}

/** Runs the call through its workflow and answers the HTTP request with the outcome. */
export async function runCall(
  res: Response,
  calls: CallWorkflows,
  call: CallRequest,
  deps: { sql: Sql; config: Config },
): Promise<void> {
  // `Prefer: wait=<s>` makes a held call answer once decided (or at the deadline).
  const waitSeconds = honouredWaitSeconds(res.req, deps.config.requests.maxWaitSeconds);
  applyWaitPreference(res, waitSeconds);
  const traceId = res.locals.traceId;
  if (waitSeconds === null) {
    const answer = await answerCall(calls, call, traceId);
    await sendCallAnswer(res, answer, { ...deps, environmentId: call.environmentId });
    return;
  }
  const gone = callerGone(res);
  const answer = await calls.waiting.run(
    call,
    () => ({ requestId: uuidv7(), traceId }),
    Date.now() + waitSeconds * 1000,
    gone,
  );
  if (gone.aborted) {
    // Operators see why an approved call did not run at once: it waits for the caller's retry.
    res.req.log.info(
      { approvalId: heldApprovalId(answer) },
      'caller hung up while waiting for a decision; the call runs when it is sent again',
    );
  }
  await sendCallAnswer(res, answer, { ...deps, environmentId: call.environmentId });
}
