import { z } from 'zod';
import { directoryCall } from '../../api/calls/action-input.js';
import { callRequestFor } from '../../api/calls/call-context.js';
import { ApiError, InvalidApiKeyError, NotFoundError } from '../../api/errors.js';
import { checkAccess } from '../../api/http/authorize.js';
import { externalUserId } from '../../api/http/external-user-id.js';
import { malformedError, malformedIn, parse } from '../../api/http/validate.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { CallRequest } from '../../workflows/call-types.js';
import type { NexusRunStart, NexusTicket } from '../../workflows/nexus/run-action-types.js';
import { findEnvironmentAction, type DirectoryAction } from '../apps/directory.js';
import type { Caller } from '../db/api-keys.js';
import { insertAuditEvents } from '../db/audit-events.js';
import { liveCallerByKeyId } from './nexus-caller.js';

/** `runAction`'s input, checked as `POST /v1/actions/{action}/run` checks its path and body. */
const runActionInput = z.strictObject({
  action: z.string().min(3).max(200),
  user: externalUserId,
  input: z.record(z.string(), z.unknown()).default({}),
  idempotency_key: z.string().min(1).max(200).optional(),
});

/**
 * The Idempotency-Key of an operation that names none: its Nexus request id, which Temporal keeps
 * for the operation's life. So the operation is one call: a retried activity, or the retry
 * after approval, meets the same call and never runs it twice.
 */
export function operationIdempotencyKey(start: NexusRunStart): string {
  return start.request.idempotency_key ?? `nexus-${start.operationRequestId}`;
}

/** The refused call's audit row, as REST writes one (api/calls/refusals.ts). */
async function auditRefusal(
  sql: Sql,
  caller: Caller,
  start: NexusRunStart,
  ticket: NexusTicket,
  found: DirectoryAction | null,
  error: ApiError,
): Promise<void> {
  // As sent: the caller's input is checked here, so its fields may be anything.
  const sent = start.request as unknown as Record<string, unknown>;
  const user = externalUserId.safeParse(sent.user);
  const action = found
    ? found.id
    : typeof start.request.action === 'string'
      ? start.request.action
      : '';
  await insertAuditEvents(sql, [
    {
      id: ticket.requestId,
      environmentId: caller.environmentId,
      action,
      scope: found?.scope ?? null,
      decision: 'denied',
      reason: `${error.code}: ${error.message}`.slice(0, 1000),
      agentId: caller.agentId,
      via: 'api',
      userExternalId: user.success ? user.data : null,
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: {
        action,
        user: sent.user ?? null,
        via: 'api',
        input: sent.input ?? null,
      },
      response: null,
      traceId: ticket.traceId,
      policyId: null,
      policyVersion: null,
    },
  ]);
}

/**
 * The CallRequest of a `runAction` operation, built exactly as a REST run builds its own: the
 * key as it stands now (revoked: invalid_api_key), its access (a read-only key cannot call), the
 * action as the environment knows it, the input checked by the action's schema, and the same
 * fingerprint. Every refusal after the key is recognised is audited `denied`, as REST does.
 */
export async function nexusCallRequest(
  deps: { sql: Sql; config: Config },
  start: NexusRunStart,
  ticket: NexusTicket,
): Promise<CallRequest> {
  const caller = await liveCallerByKeyId(deps.sql, start.caller.keyId);
  if (!caller) {
    throw new InvalidApiKeyError('The API key that started this operation has been revoked.');
  }
  let found: DirectoryAction | null = null;
  try {
    const asked = typeof start.request.action === 'string' ? start.request.action : '';
    found = asked ? await findEnvironmentAction(deps.sql, caller.environmentId, asked) : null;
    checkAccess(caller, { operation: 'call' });
    const request = parse(runActionInput, start.request, 'body');
    const malformed = malformedIn(request);
    if (malformed) throw malformedError(malformed, 'body');
    if (!found) throw new NotFoundError(`Action "${request.action}"`);
    const target = await directoryCall(found, request.input);
    return callRequestFor(caller, request.user, target, deps.config.approvals, {
      via: 'api',
      idempotencyKey: operationIdempotencyKey(start),
    });
  } catch (error) {
    if (error instanceof ApiError) {
      await auditRefusal(deps.sql, caller, start, ticket, found, error);
    }
    throw error;
  }
}
