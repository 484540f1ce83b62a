/**
 * One governed call: an action run or a proxy request. Its life story:
 *
 *   prepare (connection + policy) → deny        → answer denied_by_policy
 *                                 → allow       → call the app → answer its result
 *                                 → ask         → open an approval, answer approval_required,
 *                                                 wait for a decision or the expiry
 *                                   approved    → the next identical call runs here, once
 *                                   rejected    → identical calls are denied until the expiry
 *                                   expired     → the workflow ends; the next call asks anew
 *
 * An allowed read is prepared, served and audited in one local activity, which spares it the
 * round trips of separate steps.
 *
 * The workflow id is `call/<environment>/<action>/<fingerprint>`, so identical calls meet here: each HTTP
 * request is an Update (`call`) whose result is its answer, and every one is audited.
 */
import {
  ApplicationFailure,
  ParentClosePolicy,
  type ActivityOptions,
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities/index.js';
import type { AuditContext } from '../activities/calls/call-records.js';
import type { ReadStep } from '../activities/calls/serve-read.js';
import {
  type AnsweredElsewhere,
  type ApprovalView,
  type AuditDecision,
  type CallAnswer,
  type CallRequest,
  type CallTargetInput,
  type CallTicket,
  type DecisionInput,
  type DecisionOutcome,
  type DecisionRecord,
  type Preparation,
  READ_ATTEMPTS,
} from './call-types.js';
import {
  APPROVAL_NOT_PENDING,
  CALL_ENDED,
  DECIDER_REFUSED,
  GRANT_REFUSED,
  PAST_DEADLINE,
  awaitDecisionUpdate,
  callUpdate,
  cancelSignal,
  decideUpdate,
} from './call-messages.js';
import {
  ANSWER_ENDED,
  ANSWER_NOT_RUN,
  answerDenied,
  answerDeniedSinceApproval,
  answerKept,
  finalForKey,
  answerHeld,
  answerRejected,
  answerStopped,
} from './call-answers.js';
import {
  type Decider,
  deciderIdentity,
  deciderLabel,
  deciderRefusal,
  decidersInWords,
} from './decider-rules.js';
import { ApprovalNotices } from './approval-notices.js';
import { findApp } from './catalog/index.js';
import { searchAttributes } from './search-attributes.js';
import type { Settled } from './upstream-answer.js';
import { settleFailure, settleOutcome } from './upstream-settlement.js';
import { approvalDecidedWebhook, approvalRequestedWebhook } from './webhook.js';

/** The longest one awaitDecision Update waits, whatever it asks: an API asks again for longer. */
const MAX_WAIT_MS = 10 * 60 * 1000;

const records = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '100 milliseconds', maximumAttempts: 5 },
});

/**
 * The bookkeeping of a call that reached the app: the app has acted, so its caller must get the
 * app's answer, never a retryable internal_error that invites the write again, and the call must
 * have its audit row. Retried until Postgres takes it; meanwhile the caller waits (the API bounds
 * that wait), and an identical call finds this one still open rather than running it again.
 */
const servedRecords = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '100 milliseconds', maximumInterval: '5 seconds' },
});

// The app's timeout (UPSTREAM_TIMEOUT_MS, at most 2 minutes) twice over, for the retry after a
// 401, fits inside; a write also heartbeats, so a lost worker is noticed long before this.
const startToCloseTimeout = '5 minutes';

/**
 * Reads may repeat harmlessly: a local activity in the same workflow task (which saves the
 * activity's and a workflow task's round trips), retried by Temporal. Writes go through the
 * server as a regular activity with a single attempt: a worker that dies mid-request, or a
 * timeout, never sends the write again behind the caller's back. The activity itself tries a
 * write again only while its request provably never left: one that timed out may have happened.
 */
const writeOptions: ActivityOptions = {
  startToCloseTimeout,
  // The activity heartbeats every second: a dead worker is noticed in seconds.
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
};
const upstreamFor = {
  write: proxyActivities<Activities>(writeOptions).callUpstream,
  read: proxyLocalActivities<Activities>({
    startToCloseTimeout,
    retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
  }).callUpstream,
};

/**
 * An allowed read in one local activity: prepare, call the app, audit. Tried whole up to
 * READ_ATTEMPTS times (activities/calls/serve-read.ts), as the read activity was.
 */
const oneStep = proxyLocalActivities<Activities>({
  startToCloseTimeout,
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumAttempts: READ_ATTEMPTS,
  },
});

/**
 * A write to a tool of a remote MCP server may wait for a task the server runs the tool as (MCP
 * tasks), up to an hour (MAX_TASK_WAIT_MS, activities/calls/mcp-remote-task.ts) plus the time
 * to fetch its result and to cancel it. A worker lost meanwhile costs an attempt, not the call:
 * the next attempt goes on with the task its predecessor recorded in its heartbeat details, and
 * sends nothing when it finds none; every failure the activity reports itself is final
 * (activities/calls/mcp-tool-upstream.ts), so Temporal starts another attempt only after a
 * lost worker or a time limit. Calls started before this replay with `writeOptions`.
 */
const remoteToolWriteOptions: ActivityOptions = {
  startToCloseTimeout: '70 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 10 },
};

/**
 * A write that must start by `startBy` (epoch ms) or not at all: queued while no worker polls, it
 * would otherwise reach the app long after its callers were told it failed. (A later attempt of a
 * remote tool's write that no worker takes by then fails with the details its predecessor
 * recorded, which workflows/upstream-settlement.ts reads as a call that may have happened.)
 */
function writeStartingBy(startBy: number | null, target: CallTargetInput) {
  const remoteTool = findApp(target.app) === undefined && patched('remote-tool-write-attempts');
  const options = remoteTool ? remoteToolWriteOptions : writeOptions;
  if (startBy === null) {
    return remoteTool ? proxyActivities<Activities>(options).callUpstream : upstreamFor.write;
  }
  const scheduleToStartTimeout = Math.max(startBy - Date.now(), 1000);
  return proxyActivities<Activities>({ ...options, scheduleToStartTimeout }).callUpstream;
}

/**
 * The API tells a caller 503 once its deadline has passed, so an Update that reaches the workflow
 * after it is refused unapplied, however long it waited in Temporal for a worker. The workflow's
 * clock is the workflow task's start, so the check replays the same way.
 */
function refuseLate(deadline: number | undefined): void {
  if (deadline !== undefined && Date.now() > deadline) {
    throw ApplicationFailure.nonRetryable(
      'the request reached the workflow after its deadline',
      PAST_DEADLINE,
    );
  }
}

/** Whom a grant may cover; a decision Update is checked against it, whoever sent it. */
const GRANT_FOR: readonly string[] = ['user', 'any_user'];

interface HeldState {
  approval: ApprovalView | null;
  /** Set once the approval is settled: by a rejection, or by the approval that reached the quorum. */
  decision: 'approved' | 'rejected' | null;
  /** decide Updates writing now; the expiry must wait for them. */
  deciding: number;
  /** The user was deleted. */
  cancelled: boolean;
  /** Identities that decided the approval, whom the validator refuses a second decision. */
  decided: string[];
  /** Labels of the approving decisions, oldest first, for the audit row of the approved run. */
  approvers: string[];
  /** Owners of the held agent's live keys when the call was held, refused as deciders. */
  keyOwners: string[];
}

type Phase = 'evaluating' | 'running' | 'held' | 'approved' | 'rejected' | 'ended';

interface Waiter {
  ticket: CallTicket;
  answer?: CallAnswer;
}

/** A caller whose API still waits for the call to start (CallTicket.deadline). */
function live(waiter: Waiter): boolean {
  return waiter.ticket.deadline === undefined || Date.now() <= waiter.ticket.deadline;
}

/** The last moment one of these callers still waits for the call to start; null for no bound. */
function latestDeadline(waiters: Waiter[]): number | null {
  let latest = Number.NEGATIVE_INFINITY;
  for (const { ticket } of waiters) {
    if (ticket.deadline === undefined) return null;
    latest = Math.max(latest, ticket.deadline);
  }
  return latest;
}

export interface CallSummary {
  decision: AuditDecision;
  approvalId: string | null;
  approvalStatus: ApprovalView['status'] | null;
}

/**
 * `first`: the ticket of the Update that starts the workflow (update-with-start sends both), so
 * the first step can carry it; absent from calls started before it was sent.
 */
export async function governedCall(call: CallRequest, first?: CallTicket): Promise<CallSummary> {
  let phase: Phase = 'evaluating';
  let waiting: Waiter[] = [];
  /** What callers get while the call is held or rejected: answered at once, no waiting. */
  let standing: Settled | null = null;
  /** When a held or rejected call stops answering for its approval (epoch ms). */
  let holdEndsAt = Number.POSITIVE_INFINITY;
  // Changed by the handlers while the main story waits, hence an object TS does not narrow.
  const held: HeldState = {
    approval: null,
    decision: null,
    deciding: 0,
    cancelled: false,
    decided: [],
    approvers: [],
    keyOwners: [],
  };
  let webhook: Promise<unknown> | null = null;
  /** Tells the people asked (e-mail, Slack, Teams), reminds and escalates: set once held. */
  let notices: ApprovalNotices | null = null;
  let context: AuditContext = {
    connectedUserId: null,
    connectionId: null,
    policyId: null,
    policyVersion: null,
  };
  let outcome: AuditDecision = 'failed';
  /**
   * Requests an earlier run of this call answered: a request whose answer was lost on its way back
   * may be handed to this run with the same id. It gets that run's answer again, never one of this
   * run, and never makes this run act.
   */
  const answeredBefore = new Map<string, CallAnswer>();

  /** Notes what was found answered before, and gives those waiting callers their answers. */
  function redirectAnswered(found: AnsweredElsewhere | undefined): void {
    if (!found) return;
    for (const [id, answer] of Object.entries(found)) answeredBefore.set(id, answer);
    waiting = waiting.filter((waiter) => {
      const answer = answeredBefore.get(waiter.ticket.requestId);
      if (answer === undefined) return true;
      waiter.answer = answer;
      return false;
    });
  }

  // A response means the call reached (or tried to reach) the app: its row must be written.
  // Histories recorded before the write reported earlier runs' answers return nothing from it:
  // hence `| undefined`.
  const audit = (tickets: CallTicket[], settled: Settled): Promise<AnsweredElsewhere | undefined> =>
    (settled.response === null ? records : servedRecords).recordAudit(
      call,
      context,
      tickets.map((ticket) => ({
        id: ticket.requestId,
        traceId: ticket.traceId,
        decision: settled.decision,
        reason: settled.reason,
        approvalId: held.approval?.id ?? null,
        response: settled.response,
      })),
      // A final answer is kept under the call's Idempotency-Key for its retries.
      call.idempotencyKey !== undefined && finalForKey(settled)
        ? { answer: settled.answer, decision: settled.decision }
        : undefined,
    );

  /**
   * Answers every caller waiting so far, after their audit rows are written (`audited`: the one
   * request whose row the one-step read already wrote).
   */
  async function settle(settled: Settled, audited: string | null = null): Promise<void> {
    const batch = waiting;
    waiting = [];
    outcome = settled.decision;
    const unrecorded = batch
      .map((waiter) => waiter.ticket)
      .filter((ticket) => ticket.requestId !== audited);
    const found = unrecorded.length > 0 ? await audit(unrecorded, settled) : undefined;
    for (const waiter of batch) {
      waiter.answer = found?.[waiter.ticket.requestId] ?? settled.answer;
    }
  }

  setHandler(
    callUpdate,
    async (ticket) => {
      const earlier = answeredBefore.get(ticket.requestId);
      if (earlier !== undefined) return earlier;
      if ((phase === 'held' || phase === 'rejected') && standing) {
        const found = await audit([ticket], standing);
        return found?.[ticket.requestId] ?? standing.answer;
      }
      const waiter: Waiter = { ticket };
      waiting.push(waiter);
      await condition(() => waiter.answer !== undefined);
      return waiter.answer as CallAnswer;
    },
    {
      validator: (ticket: CallTicket) => {
        refuseLate(ticket.deadline);
        // A call that has ended is over: the caller sends it again and meets a fresh workflow.
        // So is a hold past its expiry whose timer this workflow has not yet seen fire.
        const lapsed = (phase === 'held' || phase === 'rejected') && Date.now() >= holdEndsAt;
        if (phase === 'ended' || lapsed) {
          throw ApplicationFailure.nonRetryable('this call has ended', CALL_ENDED);
        }
      },
    },
  );

  /** Starts the `approval.decided` delivery once the approval is settled. */
  function announceDecision(decided: ApprovalView): void {
    const event = {
      environmentId: call.environmentId,
      approvalId: decided.id,
      eventId: `evt_${decided.id}`,
    };
    // Not awaited here: the decider's answer does not wait for the delivery's start (end() does).
    webhook = servedRecords.startApprovalDelivery('approval.decided', event);
  }

  /**
   * One decision, kept as it arrives (approvals that need several decisions): recorded with the
   * approval's settling, when it settles it, in one local activity. The approval stays pending
   * until the quorum of different deciders approved, or one rejected; the call runs once, after
   * the decision that reached the quorum. Answers the approval after this decision.
   */
  async function decideInTurn(input: DecisionInput): Promise<ApprovalView> {
    const pending = held.approval as ApprovalView;
    const decider: Decider = input.decider ?? { kind: 'key', agentId: input.decidedBy };
    const record: DecisionRecord = {
      id: uuid4(),
      approvalId: pending.id,
      identity: deciderIdentity(decider),
      label: deciderLabel(decider),
      decider,
      decision: input.decision,
      ...(input.decision === 'approve' && input.grant ? { grant: input.grant } : {}),
      at: Date.now(),
    };
    held.deciding += 1;
    let outcome: DecisionOutcome;
    try {
      outcome = await records.recordDecision(record);
    } finally {
      // A failed write leaves the approval as it was: the expiry and later decisions go on.
      held.deciding -= 1;
    }
    if (outcome.kind === 'already_decided') {
      throw ApplicationFailure.nonRetryable(
        `"${record.label}" has already decided this approval, and the same person cannot decide it twice: another decider must.`,
        DECIDER_REFUSED,
      );
    }
    if (outcome.kind === 'not_pending') {
      throw ApplicationFailure.nonRetryable(
        'the approval is no longer pending',
        APPROVAL_NOT_PENDING,
      );
    }
    if (!held.decided.includes(record.identity)) held.decided.push(record.identity);
    if (record.decision === 'approve') held.approvers.push(record.label);
    // The Slack messages show the tally, or the outcome: whichever path this decision took.
    notices?.changed();
    const decided = outcome.approval;
    // Decisions recorded together may come back in another order: a pending view never
    // replaces the settled one.
    if (held.decision !== null) return decided;
    held.approval = decided;
    if (decided.status !== 'approved' && decided.status !== 'rejected') return decided;
    held.decision = decided.status;
    announceDecision(decided);
    return decided;
  }

  setHandler(
    decideUpdate,
    async (input) => {
      // Decisions taken before an approval could need several settled it at once, and replay so.
      if (patched('approval-quorum')) return decideInTurn(input);
      held.deciding += 1;
      const pending = held.approval as ApprovalView;
      const status = input.decision === 'approve' ? 'approved' : 'rejected';
      // An approval may carry a grant, made with it from the workflow's clock. Decisions recorded
      // before grants replay without one.
      const grant =
        input.decision === 'approve' && input.grant && patched('approval-grants')
          ? { ...input.grant, at: Date.now() }
          : undefined;
      let decided: ApprovalView | null;
      try {
        decided = grant
          ? await records.settleApproval(pending.id, status, input.decidedBy, grant)
          : await records.settleApproval(pending.id, status, input.decidedBy);
      } finally {
        // A failed write leaves the approval pending: the expiry and a later decision go on.
        held.deciding -= 1;
      }
      if (!decided) {
        throw ApplicationFailure.nonRetryable(
          'the approval is no longer pending',
          APPROVAL_NOT_PENDING,
        );
      }
      held.approval = decided;
      held.decision = status;
      const event = {
        environmentId: call.environmentId,
        approvalId: decided.id,
        eventId: `evt_${decided.id}`,
      };
      // Not awaited here: the decider's answer does not wait for the delivery's start (end()
      // does). Started from a local activity rather than as a child, which spares the approved
      // retry a failed workflow task and a replay; decisions taken before that change replay as
      // they ran.
      webhook = patched('decided-webhook-from-activity')
        ? servedRecords.startApprovalDelivery('approval.decided', event)
        : startChild(approvalDecidedWebhook, {
            workflowId: `webhook/approval.decided/${decided.id}`,
            args: [event],
            parentClosePolicy: ParentClosePolicy.ABANDON,
          });
      return decided;
    },
    {
      validator: (input: DecisionInput) => {
        refuseLate(input.deadline);
        // Decisions may be recorded side by side (Postgres counts them one after the other), but
        // none once the approval is settled or past its expiry.
        if (
          phase !== 'held' ||
          held.decision !== null ||
          Date.now() >= holdEndsAt ||
          held.approval?.id !== input.approvalId
        ) {
          throw ApplicationFailure.nonRetryable(
            `the approval is ${held.approval?.status ?? 'not open'}`,
            APPROVAL_NOT_PENDING,
          );
        }
        // The API refuses these first, with its reasons; this holds whatever path a decision took.
        const refusal = deciderRefusal(
          {
            agentId: call.agentId,
            requestedFrom: held.approval.requested_from,
            decided: held.decided,
            agentKeyOwners: held.keyOwners,
          },
          input.decider ?? input.decidedBy,
        );
        if (refusal !== null) throw ApplicationFailure.nonRetryable(refusal, DECIDER_REFUSED);
        // The API checks the grant against the policy first; this holds whatever path it took.
        const { grant } = input;
        if (
          grant !== undefined &&
          (input.decision !== 'approve' ||
            !Number.isInteger(grant.seconds) ||
            grant.seconds < 1 ||
            !GRANT_FOR.includes(grant.for))
        ) {
          throw ApplicationFailure.nonRetryable(
            'a grant goes with an approval, for a whole number of seconds, for the user or any user',
            GRANT_REFUSED,
          );
        }
      },
    },
  );

  // Callers who prefer to wait for the decision (`Prefer: wait`) wait here, on the workflow's
  // clock, so an API process that restarts loses nothing: its callers send again and wait again.
  setHandler(
    awaitDecisionUpdate,
    async ({ approvalId, waitMs }) => {
      const holds = () => held.approval?.id === approvalId;
      const undecided = () =>
        holds() && phase === 'held' && held.decision === null && !held.cancelled;
      if (undecided())
        await condition(() => !undecided(), Math.max(1, Math.min(waitMs, MAX_WAIT_MS)));
      if (!holds() || phase === 'ended') return 'ended';
      return held.decision ?? (held.approval as ApprovalView).status;
    },
    {
      validator: ({ deadline }: { deadline?: number }) => {
        refuseLate(deadline);
        if (phase === 'ended')
          throw ApplicationFailure.nonRetryable('this call has ended', CALL_ENDED);
      },
    },
  );

  setHandler(cancelSignal, () => {
    held.cancelled = true;
  });

  /**
   * The approved run's audit row names who approved it, inside the audit trail's chain: every
   * approving decision, or, for a decision taken before decisions were kept, the one decider.
   */
  function approvedBy(settled: Settled): Settled {
    const approvers =
      held.approvers.length > 0
        ? held.approvers
        : held.approval?.decided_by
          ? [held.approval.decided_by]
          : [];
    if (approvers.length === 0) return settled;
    return { ...settled, reason: `${settled.reason}; approved by ${decidersInWords(approvers)}` };
  }

  /** `startBy`: when a write that has not started by then must not start (see writeStartingBy). */
  async function execute(
    preparation: Preparation & { ok: true },
    startBy: number | null = null,
  ): Promise<Settled> {
    const { target } = call;
    try {
      const callUpstream =
        target.scope === 'read' ? upstreamFor.read : writeStartingBy(startBy, target);
      const result = await callUpstream({
        connectionId: preparation.connectionId,
        target,
        environmentId: call.environmentId,
      });
      return settleOutcome(result, target, preparation);
    } catch (error) {
      return settleFailure(error, target);
    }
  }

  async function end(settled: Settled | null, audited: string | null = null): Promise<CallSummary> {
    phase = 'ended';
    if (settled) {
      await settle(settled, audited);
      // The operator's filter agrees with the audit log: an allowed call the app failed is failed.
      if (settled.decision === 'failed') {
        upsertSearchAttributes([{ key: searchAttributes.decision, value: 'failed' }]);
      }
    }
    // Callers who arrived for a retry that will not run (the user was deleted meanwhile).
    if (waiting.length > 0) await settle(ANSWER_ENDED);
    if (webhook) await webhook;
    if (notices) await notices.updated();
    await condition(allHandlersFinished);
    return {
      decision: outcome,
      approvalId: held.approval?.id ?? null,
      approvalStatus: held.approval?.status ?? null,
    };
  }

  /**
   * The call's connection and policy verdict. An allowed read started with its first ticket is also
   * served and audited in the same local activity; calls started before that replay as they ran
   * (`patched`).
   */
  async function prepare(): Promise<
    | { kind: 'prepared'; preparation: Preparation }
    | { kind: 'served'; step: ReadStep & { kind: 'served' } }
    | { kind: 'failed'; settled: Settled }
  > {
    if (!(first && call.target.scope === 'read' && patched('allowed-read-in-one-step'))) {
      const preparation = await records.prepareCall(call, heldRequestIds(), Date.now());
      return { kind: 'prepared', preparation };
    }
    let step: ReadStep;
    try {
      step = await oneStep.serveRead(call, first, Date.now());
    } catch (error) {
      // Every attempt failed before an answer could be settled (Postgres unreachable while
      // preparing, or the attempt timed out): answered and audited as the failure it was.
      return { kind: 'failed', settled: settleFailure(error, call.target) };
    }
    return step.kind === 'served'
      ? { kind: 'served', step }
      : { kind: 'prepared', preparation: step.preparation };
  }

  /** The requests this run holds now: the first, and whoever joined it. */
  function heldRequestIds(): string[] {
    const ids = waiting.map((waiter) => waiter.ticket.requestId);
    if (first && !ids.includes(first.requestId)) ids.unshift(first.requestId);
    return ids;
  }

  const prepared = await prepare();
  if (prepared.kind !== 'failed') {
    const known = prepared.kind === 'served' ? prepared.step.preparation : prepared.preparation;
    redirectAnswered(known.answeredElsewhere);
    context = {
      connectedUserId: known.connectedUserId,
      connectionId: known.connectionId,
      policyId: known.ok ? known.policyId : null,
      policyVersion: known.ok ? known.policyVersion : null,
      // The grant that let the call run without asking is named by its audit rows.
      grantId: known.ok ? (known.grantId ?? null) : null,
    };
  }
  if (prepared.kind === 'served') {
    const { settled } = prepared.step;
    phase = 'running';
    // end() labels a failed one `failed`: one attribute write either way.
    if (settled.decision !== 'failed') {
      upsertSearchAttributes([{ key: searchAttributes.decision, value: 'allowed' }]);
    }
    return end(settled, prepared.step.audited ? (first?.requestId ?? null) : null);
  }
  if (prepared.kind === 'failed') return end(prepared.settled);
  const preparation = prepared.preparation;
  // The call was answered under its Idempotency-Key already (by a run that closed after this run's
  // callers were let through): they get that answer, and nothing runs.
  if (preparation.kept) return end(answerKept(preparation.kept));
  // Labelled `failed` by end(), as every call the service stopped.
  if (!preparation.ok) return end(answerStopped(preparation));

  if (preparation.decision === 'deny') {
    upsertSearchAttributes([{ key: searchAttributes.decision, value: 'denied' }]);
    return end(answerDenied(preparation.policyId, preparation.reason));
  }

  // Only a caller still waiting makes the call act. The Update that started this workflow may have
  // been refused as late (no worker took it in time), or its caller's wait may have run out while
  // the call was prepared; then neither the app nor the approvers hear of it. Calls started by an
  // older worker replay without this check.
  const needsLiveCaller = patched('call-needs-live-caller');
  if (needsLiveCaller && !waiting.some(live)) return end(ANSWER_NOT_RUN);

  if (preparation.decision === 'allow') {
    upsertSearchAttributes([{ key: searchAttributes.decision, value: 'allowed' }]);
    phase = 'running';
    // A write starts while its callers still wait, or not at all. (An approved write needs no such
    // bound: run late, it still consumes its approval, and a retry meets a new one.)
    const startBy = needsLiveCaller ? latestDeadline(waiting) : null;
    const settled = await execute(preparation, startBy);
    return end(settled);
  }

  // ask: hold the call for a person's decision.
  const {
    agent_key_owners: keyOwners = [],
    decided = [],
    ...opened
  } = await records.openApproval(call, {
    workflowId: workflowInfo().workflowId,
    requestedFrom: preparation.approval.requested_from,
    ttlSeconds: preparation.approval.ttl_seconds,
    quorum: preparation.approval.quorum ?? 1,
    policyId: preparation.policyId ?? 'none',
    policyVersion: preparation.policyVersion ?? 0,
    policyRule: preparation.rule,
  });
  held.approval = opened;
  held.keyOwners = keyOwners;
  held.decided = [...decided];
  upsertSearchAttributes([
    { key: searchAttributes.decision, value: 'blocked' },
    { key: searchAttributes.approvalId, value: opened.id },
  ]);
  setCurrentDetails(`Waiting for approval ${opened.id} until ${opened.expires_at}.`);
  // approval.requested carries the decision links to the approvers. Nothing waits for its start
  // here: not the callers' answer, nor the answers after a decision (see `webhook` below). A
  // previous run of this call that held the same approval may have a delivery still retrying:
  // that one carries the same links. Held calls outlive deploys: the history of one held before
  // this webhook existed must replay without it (`patched`).
  const requestedEvent = {
    environmentId: call.environmentId,
    approvalId: opened.id,
    eventId: `evt_${opened.id}_requested`,
  };
  // Started, as approval.decided is, from a local activity that starts a delivery only when the
  // environment has a webhook endpoint; calls held before that change replay as they ran.
  const requested = !patched('approval-requested-webhook')
    ? null
    : patched('approval-requested-from-activity')
      ? servedRecords.startApprovalDelivery('approval.requested', requestedEvent)
      : startChild(approvalRequestedWebhook, {
          workflowId: `webhook/approval.requested/${opened.id}`,
          args: [requestedEvent],
          parentClosePolicy: ParentClosePolicy.ABANDON,
        }).catch((error: unknown) => {
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        });
  standing = answerHeld(opened, preparation.reason);
  phase = 'held';
  holdEndsAt = Date.parse(opened.expires_at);
  await settle(standing);
  // The people asked are told, reminded and escalated to, beside the wait below. Calls held
  // before approvers were told replay without it.
  if (patched('approval-notifications')) {
    notices = new ApprovalNotices(
      call.environmentId,
      opened,
      () => phase === 'held' && held.decision === null && !held.cancelled,
    );
    // Its failures are each message's own, recorded where they happen; none ends the call.
    void notices
      .run(preparation.approval, (escalated) => {
        // Only who is asked changes: decisions kept meanwhile stay as the workflow has them.
        if (held.approval)
          held.approval = { ...held.approval, requested_from: escalated.requested_from };
      })
      .catch(() => undefined);
  }

  const expiresInMs = Date.parse(opened.expires_at) - Date.now();
  await condition(() => held.decision !== null || held.cancelled, Math.max(expiresInMs, 1));
  // A decision that the expiry overtook mid-write still counts: it reached Postgres first.
  if (held.deciding > 0 && held.decision === null) {
    await condition(() => held.decision !== null || held.deciding === 0);
  }
  // A child must have started before its parent closes: end() awaits `webhook`, which the
  // decision (if any) has set by now (TS cannot see a handler's assignment), so it waits for
  // both webhooks' starts.
  const decidedStart = webhook as Promise<unknown> | null;
  webhook = Promise.all([decidedStart ?? Promise.resolve(), requested ?? Promise.resolve()]);

  if (held.decision === null) {
    const why = held.cancelled ? 'cancelled' : 'expired';
    held.approval = (await records.settleApproval(opened.id, why, null)) ?? held.approval;
    notices?.changed();
    upsertSearchAttributes([{ key: searchAttributes.decision, value: why }]);
    setCurrentDetails(`Approval ${opened.id} ${why}.`);
    return end(null);
  }

  if (held.decision === 'rejected') {
    const rejected = held.approval;
    phase = 'rejected';
    upsertSearchAttributes([{ key: searchAttributes.decision, value: 'denied' }]);
    setCurrentDetails(
      `Approval ${rejected.id} rejected; identical calls are denied until ${rejected.expires_at}.`,
    );
    standing = answerRejected(rejected);
    await condition(
      () => held.cancelled,
      Math.max(Date.parse(rejected.expires_at) - Date.now(), 1),
    );
    return end(null);
  }

  // Approved: the next identical call runs here, exactly once.
  phase = 'approved';
  upsertSearchAttributes([{ key: searchAttributes.decision, value: 'approved' }]);
  setCurrentDetails(`Approval ${opened.id} approved; waiting for the caller to retry.`);
  const retryEndsAt = Date.now() + call.retryWindowSeconds * 1000;
  // The policy in force when the call runs has the last word, and a request an earlier
  // run answered is no retry. Approvals decided before this check replay without it.
  const recheck = patched('approved-call-rechecked-at-run');
  let current: Preparation & { ok: true } = preparation;
  for (;;) {
    const retried = await condition(
      () => waiting.length > 0 || held.cancelled,
      Math.max(retryEndsAt - Date.now(), 1),
    );
    if (!retried || held.cancelled) return end(null);
    if (!recheck) break;
    const now = await records.prepareCall(call, heldRequestIds(), Date.now());
    redirectAnswered(now.answeredElsewhere);
    if (waiting.length === 0) continue;
    phase = 'running';
    if (!now.ok) {
      await servedRecords.consumeApproval(opened.id);
      return end(answerStopped(now));
    }
    if (now.decision === 'deny') {
      context = { ...context, policyId: now.policyId, policyVersion: now.policyVersion };
      upsertSearchAttributes([{ key: searchAttributes.decision, value: 'denied' }]);
      await servedRecords.consumeApproval(opened.id);
      setCurrentDetails(`Approval ${opened.id} no longer applies: ${now.reason}.`);
      return end(answerDeniedSinceApproval(held.approval, now.policyId, now.reason));
    }
    current = now;
    context = {
      ...context,
      connectionId: now.connectionId,
      policyId: now.policyId,
      policyVersion: now.policyVersion,
    };
    break;
  }
  phase = 'running';
  upsertSearchAttributes([{ key: searchAttributes.decision, value: 'allowed' }]);
  const settled = await execute(current);
  await servedRecords.consumeApproval(opened.id);
  setCurrentDetails(`Approval ${opened.id} used.`);
  return end(approvedBy(settled));
}
