/**
 * For callers of `gatehouse.runAction`: the Gatehouse refusal inside the failure a caller's
 * workflow meets. Temporal nests it: the NexusOperationFailure's cause is an ApplicationFailure
 * whose `type` is the code (refused once the operation started: denied_by_policy,
 * invalid_request, approval_expired, …), or a NexusHandlerFailure UNAUTHENTICATED whose cause is
 * one (a key refused at the start). Workflow-safe: no I/O.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { NexusErrorEnvelope } from './run-action-types.js';

export interface GatehouseFailure {
  code: string;
  message: string;
  /** The REST error envelope's fields (`approval`, `issues`, `upstream_status`, …), when sent. */
  error: NexusErrorEnvelope['error'] | null;
}

function envelopeOf(details: unknown[] | null | undefined): NexusErrorEnvelope['error'] | null {
  const first = details?.[0];
  if (typeof first !== 'object' || first === null || !('error' in first)) return null;
  return (first as NexusErrorEnvelope).error;
}

/** The first ApplicationFailure down the cause chain that carries a Gatehouse code; else null. */
export function gatehouseFailure(error: unknown): GatehouseFailure | null {
  for (let at: unknown = error; at instanceof Error; at = at.cause) {
    if (at instanceof ApplicationFailure && at.type && at.type !== 'OperationError') {
      return { code: at.type, message: at.message, error: envelopeOf(at.details) };
    }
  }
  return null;
}
