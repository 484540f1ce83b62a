/**
 * How the API talks to a running call workflow. Definitions only, so the API can import them
 * without the workflow's code.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ApprovalStatus,
  ApprovalView,
  CallAnswer,
  CallRequest,
  CallTicket,
  DecisionInput,
} from './call-types.js';

/** One HTTP request for the call; its result is that request's answer. */
export const callUpdate = defineUpdate<CallAnswer, [CallTicket]>('call');
/** Approve or reject the held call; answers once the decision is recorded. */
export const decideUpdate = defineUpdate<ApprovalView, [DecisionInput]>('decide');
/**
 * For `Prefer: wait`: waits, for at most `waitMs` of the workflow's clock, until the held approval
 * is decided or ends; answers its status then (`pending` when the wait ran out, `ended` when this
 * workflow no longer holds it). The API sends one per held call and process, whatever the number of
 * callers waiting, so waits never crowd the workflow's Update slots.
 */
export const awaitDecisionUpdate = defineUpdate<
  ApprovalStatus | 'ended',
  [{ approvalId: string; waitMs: number; deadline?: number }]
>('awaitDecision');
/** The user was deleted: their pending approvals end. */
export const cancelSignal = defineSignal<[string]>('cancel');

/** Update failure types the API turns into answers. */
export const CALL_ENDED = 'CallEnded';
export const APPROVAL_NOT_PENDING = 'ApprovalNotPending';
/** The decider may not decide this approval (four eyes: see decider-rules.ts). */
export const DECIDER_REFUSED = 'DeciderRefused';
/** A grant the decision cannot carry (with a rejection, or malformed). */
export const GRANT_REFUSED = 'GrantRefused';
/** The Update reached the workflow after its deadline: its caller has been told it failed. */
export const PAST_DEADLINE = 'PastDeadline';

export const CALL_WORKFLOW = 'governedCall';

/** Hex digits of the fingerprint a workflow id keeps: 128 bits, far beyond any collision. */
const ID_FINGERPRINT_HEX = 32;

/**
 * `call/<environment>/<action>/<fingerprint, first 128 bits>`: the action (`<app>.proxy` for the
 * proxy) makes the id read well in the Temporal UI's list, and the fingerprint still decides which
 * calls meet, since the action is part of what it hashes; half of it keeps the id short enough to
 * read in the list and is still unique. Calls held under older forms
 * (`call/<environment>/<fingerprint>`, or the whole fingerprint) are reached through the id their
 * approval stored (api/temporal/call-workflows.ts), never by parsing an id.
 */
export function callWorkflowId(
  call: Pick<CallRequest, 'environmentName' | 'fingerprint' | 'target'>,
): string {
  const { target } = call;
  const action = target.kind === 'action' ? target.action : `${target.app}.proxy`;
  return `call/${call.environmentName}/${action}/${call.fingerprint.slice(0, ID_FINGERPRINT_HEX)}`;
}
