import { preferHeader } from '../http/prefer.js';
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Caller } from '../../activities/db/api-keys.js';
import type { CallRequest, CallTargetInput, Via } from '../../workflows/call-types.js';
import { callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { callFingerprint } from './fingerprint.js';

/** Headers every governed call may carry. */
export const callHeaders = z.object({
  'Idempotency-Key': z.string().min(1).max(200).optional().meta({
    description:
      'Names one call for 24 hours: send a new key for each write you mean and the same key on every retry of it. Identical calls in flight share one run; once the call has its final answer (the app’s answer, a denial, or a write that may have happened), every retry with the key gets that answer again with `Idempotent-Replayed: true`, and the app is not called again. A held call retried with its key after approval runs once. The same key with another call is 409 `idempotency_key_reused`.',
  }),
  'gatehouse-via': z
    .enum(['api', 'mcp'])
    .optional()
    .meta({ description: 'How the call reached Gatehouse, for audit; default `api`.' }),
  Prefer: preferHeader,
});

/** The CallRequest for this HTTP request: caller, user, target, and the identity of the call. */
export function callRequestOf(
  req: Request,
  res: Response,
  userExternalId: string,
  target: CallTargetInput,
  settings: { retryWindowSeconds: number },
): CallRequest {
  const headers = parse(
    callHeaders,
    { 'Idempotency-Key': req.get('idempotency-key'), 'gatehouse-via': req.get('gatehouse-via') },
    'header',
  );
  return callRequestFor(callerOf(res), userExternalId, target, settings, {
    via: headers['gatehouse-via'] ?? 'api',
    idempotencyKey: headers['Idempotency-Key'],
  });
}

/**
 * The CallRequest of a caller's call however it arrived (a run, an MCP tool call): the same
 * fingerprint for the same call, so a retry by either route meets the same workflow.
 */
export function callRequestFor(
  caller: Caller,
  userExternalId: string,
  target: CallTargetInput,
  settings: { retryWindowSeconds: number },
  arrival: { via: Via; idempotencyKey?: string | undefined },
): CallRequest {
  return {
    environmentId: caller.environmentId,
    environmentName: caller.environmentName,
    agentId: caller.agentId,
    userExternalId,
    via: arrival.via,
    fingerprint: callFingerprint({
      environmentId: caller.environmentId,
      agentId: caller.agentId,
      userExternalId,
      target,
      idempotencyKey: arrival.idempotencyKey,
    }),
    target,
    retryWindowSeconds: settings.retryWindowSeconds,
    ...(arrival.idempotencyKey === undefined ? {} : { idempotencyKey: arrival.idempotencyKey }),
  };
}
