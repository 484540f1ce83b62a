import {
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
  isGrpcServiceError,
  type Client,
  type WorkflowUpdateHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordCallAudit } from '../../activities/calls/call-records.js';
import { recordReplayAudit } from '../../activities/calls/replay-audit.js';
import { callKey, claimCallKeyAndFindStanding } from '../../activities/db/call-idempotency-keys.js';
import {
  approvalView,
  findApprovalById,
  findPendingApproval,
  findStandingApproval,
  type Approval,
} from '../../activities/db/approvals.js';
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Keyring } from '../../infra/encryption.js';
import { answerHeld } from '../../workflows/call-answers.js';
import {
  APPROVAL_NOT_PENDING,
  CALL_ENDED,
  awaitDecisionUpdate,
  CALL_WORKFLOW,
  DECIDER_REFUSED,
  GRANT_REFUSED,
  PAST_DEADLINE,
  callUpdate,
  callWorkflowId,
  decideUpdate,
} from '../../workflows/call-messages.js';
import type {
  ApprovalStatus,
  ApprovalView,
  CallAnswer,
  CallRequest,
  CallTicket,
  DecisionInput,
} from '../../workflows/call-types.js';
import { searchAttributes } from '../../workflows/search-attributes.js';
import { callDetails, type CallLinkBase } from './call-links.js';
import type { GivenAnswer } from './given-answer.js';
import { WaitingCalls } from './waiting-calls.js';
import {
  ApiError,
  ConflictError,
  InsufficientAccessError,
  InvalidRequestError,
  ServiceUnavailableError,
  isTemporalUnavailable,
} from '../errors.js';

/** Defined below this module so `WaitingCalls` shares it; callers still import it from here. */
export type { GivenAnswer };

/**
 * gRPC statuses an Update may meet while many callers crowd one workflow: RESOURCE_EXHAUSTED
 * (the cap of in-flight Updates per workflow, default 10), ABORTED and UNAVAILABLE (the server
 * dropped a speculative workflow task that carried the Update).
 */
const RETRYABLE_GRPC: ReadonlySet<number> = new Set([8, 10, 14]);

/**
 * The server's rejection of an Update that reached a worker inside a workflow task the worker
 * completed without handling it. Under load the SDK can race a new Update against the task in
 * flight; the Update was never accepted, so nothing ran and the same Update id may be sent again.
 */
const UNPROCESSED_UPDATE = 'UnprocessedUpdate';

function failureType(error: unknown): string | undefined {
  if (!(error instanceof WorkflowUpdateFailedError)) return undefined;
  return error.cause instanceof ApplicationFailure ? (error.cause.type ?? undefined) : undefined;
}

/**
 * Worth another try at once: the server dropped the Update unhandled or pushed back. Safe to
 * repeat because every attempt carries the same Update id, which the server counts once.
 */
function transient(error: unknown): boolean {
  if (failureType(error) === UNPROCESSED_UPDATE) return true;
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && RETRYABLE_GRPC.has(grpc.code);
}

/**
 * How long past the deadline the API still listens for Temporal to confirm an Update it may have
 * taken just in time: the workflow refuses the Update after `deadline`, and its confirmation
 * has this long to come back before the API says the Update was not applied.
 */
function confirmationGraceMs(deadlineMs: number): number {
  return Math.min(2000, deadlineMs / 4);
}

/** The moments that bound one request's wait on Temporal (epoch ms). */
interface Bounds {
  /** Carried by the Update: the workflow refuses it, and does not start the call, after this. */
  deadline: number;
  /** The API stops waiting for the Update to be taken. */
  admitUntil: number;
  /** The API stops waiting for a taken Update's result. */
  answerBy: number;
}

/** How a wait on Temporal ended without the Update's result. */
class Unanswered extends Error {
  constructor(
    /** `not_taken`: the workflow never took the Update, and will refuse it from now on.
     * `pending`: the workflow took it; its result did not come back in time. */
    readonly state: 'not_taken' | 'pending',
    options: { cause: unknown },
  ) {
    super(`Temporal did not answer in time (${state})`, options);
    this.name = 'Unanswered';
  }
}

/** Waits with jittered backoff before another try; false when the try would come too late. */
async function backoff(attempt: number, until: number): Promise<boolean> {
  const ms = Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random());
  if (Date.now() + ms >= until) return false;
  await sleep(ms);
  return true;
}

/**
 * Sends an Update and waits for its result, within `bounds`. Each RPC carries the bound as its
 * gRPC deadline (Connection.withDeadline), so nothing keeps running in Temporal's client after
 * the request has been answered. `start` sends the Update (the same Update id every time, which
 * the server counts once) and returns once the workflow has taken or refused it. Refusals
 * `untaken` recognises (the Update never ran) and transient failures are tried again while there
 * is time; running out of it is an Unanswered.
 */
async function sendUpdate<T>(
  client: Client,
  start: () => Promise<WorkflowUpdateHandle<T>>,
  bounds: Bounds,
  untaken: (error: unknown) => boolean,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let taken = false;
    try {
      const handle = await client.withDeadline(bounds.admitUntil, start);
      taken = true;
      return await client.withDeadline(bounds.answerBy, () => handle.result());
    } catch (error) {
      if (failureType(error) === PAST_DEADLINE) throw new Unanswered('not_taken', { cause: error });
      const refused = untaken(error);
      const again = refused || (!taken && transient(error));
      if (again && (await backoff(attempt, bounds.admitUntil))) continue;
      if (again || isTemporalUnavailable(error)) {
        throw new Unanswered(taken && !refused ? 'pending' : 'not_taken', { cause: error });
      }
      throw error;
    }
  }
}

/**
 * How the API hands governed calls to Temporal: each request is an Update on
 * `call/<environment>/<action>/<fingerprint>` (callWorkflowId), started if need be
 * (update-with-start, conflict policy use-existing, reuse allow-duplicate), and its result is the
 * HTTP answer. Every wait is bounded: an Update not taken by its deadline is refused by the
 * workflow, never applied late.
 */
export class CallWorkflows {
  /** Calls whose callers prefer to wait for a held call's decision. */
  readonly waiting: WaitingCalls;

  constructor(
    private readonly client: Client,
    private readonly sql: Sql,
    private readonly keyring: Keyring,
    private readonly taskQueue: string,
    private readonly limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
    /** Where the workflow's details link its first request's audit event and trace. */
    private readonly links: CallLinkBase | null = null,
  ) {
    this.waiting = new WaitingCalls(this, sql, limits.maxWaitSeconds * 1000);
  }

  private bounds(answerMs: number): Bounds {
    const deadline = Date.now() + this.limits.deadlineMs;
    const admitUntil = deadline + confirmationGraceMs(this.limits.deadlineMs);
    return { deadline, admitUntil, answerBy: admitUntil + answerMs };
  }

  async run(call: CallRequest, ticket: CallTicket): Promise<GivenAnswer> {
    // Repeats of a held call are answered from Postgres: the workflow would only say the same, and
    // fifty waiting callers must not crowd its ten Update slots. A call with an Idempotency-Key
    // binds it, or meets the answer kept under it; both in one statement, and the whole held
    // approval read only when there is one.
    const key = call.idempotencyKey;
    const { claim, standing } =
      key === undefined
        ? { claim: null, standing: await this.standing(call) }
        : await claimCallKeyAndFindStanding(this.sql, this.keyring, {
            ...callKey(call, key),
            retryWindowSeconds: call.retryWindowSeconds,
          });
    if (claim?.kind === 'reused') return this.refuseReusedKey(call, ticket);
    if (claim?.kind === 'replay') {
      await recordReplayAudit(this.sql, call, ticket, claim.kept);
      return { ...claim.kept.answer, replayed: true };
    }
    const pending =
      standing?.status !== 'pending'
        ? null
        : 'policyId' in standing
          ? standing
          : await findPendingApproval(this.sql, call.environmentId, call.fingerprint);
    if (pending) {
      const held = answerHeld(approvalView(pending), `approval ${pending.id} pending`);
      await recordCallAudit(
        this.sql,
        call,
        {
          connectedUserId: null,
          connectionId: null,
          policyId: pending.policyId,
          policyVersion: pending.policyVersion,
        },
        [
          {
            id: ticket.requestId,
            traceId: ticket.traceId,
            decision: held.decision,
            reason: held.reason,
            approvalId: pending.id,
            response: held.response,
          },
        ],
      );
      return held.answer;
    }
    // A decided approval's retry goes to the workflow that holds it, under the id it was held
    // with: calls held before workflow ids named the action live under the older id form.
    return this.update(call, ticket, standing?.workflowId ?? callWorkflowId(call));
  }

  private standing(call: CallRequest): Promise<Approval | null> {
    return findStandingApproval(
      this.sql,
      call.environmentId,
      call.fingerprint,
      call.retryWindowSeconds,
    );
  }

  /** The same Idempotency-Key for another call: refused, and audited as refused. */
  private async refuseReusedKey(call: CallRequest, ticket: CallTicket): Promise<never> {
    const error = new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was used for a different call (another action, user, input, or ' +
        'request) within 24 hours; use a new key for a new call.',
    );
    await recordCallAudit(
      this.sql,
      call,
      { connectedUserId: null, connectionId: null, policyId: null, policyVersion: null },
      [
        {
          id: ticket.requestId,
          traceId: ticket.traceId,
          decision: 'denied',
          reason: `idempotency_key_reused: ${error.message}`,
          approvalId: null,
          response: null,
        },
      ],
    );
    throw error;
  }

  private async update(
    call: CallRequest,
    request: CallTicket,
    workflowId: string,
  ): Promise<CallAnswer> {
    const { target } = call;
    const action = target.kind === 'action' ? target.action : `${target.app}.proxy`;
    // A taken call may still wait for the app (and a refresh, and a retry after a 401).
    const bounds = this.bounds(this.limits.callAnswerMs);
    const ticket: CallTicket = { ...request, deadline: bounds.deadline };
    try {
      return await sendUpdate(
        this.client,
        () =>
          this.client.workflow.startUpdateWithStart(callUpdate, {
            args: [ticket],
            updateId: ticket.requestId,
            waitForStage: WorkflowUpdateStage.ACCEPTED,
            startWorkflowOperation: new WithStartWorkflowOperation(CALL_WORKFLOW, {
              taskQueue: this.taskQueue,
              workflowId,
              workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
              workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
              // The first ticket too: an allowed read is served in the first step.
              args: [call, ticket],
              // What an operator filters and reads in the UI. Never the call's input: search
              // attributes and summaries are stored unencrypted.
              typedSearchAttributes: [
                { key: searchAttributes.environment, value: call.environmentName },
                { key: searchAttributes.agent, value: call.agentId },
                { key: searchAttributes.user, value: call.userExternalId },
                { key: searchAttributes.action, value: action },
              ],
              staticSummary: `${action} for user ${call.userExternalId}, agent ${call.agentId}`,
              // Set at the start, as the summary: no workflow command, no replay change.
              ...(this.links ? { staticDetails: callDetails(this.links, ticket) } : {}),
            }),
          }),
        bounds,
        // A call workflow that just ended (or closed between its start and the Update) is
        // replaced by the next attempt's start; the audit log counts the request id once.
        (error) =>
          failureType(error) === CALL_ENDED ||
          failureType(error) === UNPROCESSED_UPDATE ||
          error instanceof WorkflowNotFoundError,
      );
    } catch (error) {
      if (!(error instanceof Unanswered)) throw error;
      const seconds = Math.ceil(this.limits.deadlineMs / 1000);
      throw error.state === 'not_taken'
        ? new ServiceUnavailableError(
            `Gatehouse could not start the call within ${seconds} s: it did not run, and will ` +
              'not run later. Send it again.',
            { call_state: 'not_started' },
          )
        : new ServiceUnavailableError(
            'The call started but its answer did not come in time; it may have reached the ' +
              'app. Send the identical request again: while the call is still open, it joins ' +
              'it and gets its answer instead of running it twice.',
            { call_state: 'pending' },
          );
    }
  }

  /**
   * Waits in the workflow holding the approval until it is decided or `waitMs` pass.
   * `unknown` when Temporal did not answer in time: the caller gets the held answer it had.
   */
  async awaitDecision(
    workflowId: string,
    approvalId: string,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<ApprovalStatus | 'ended' | 'unknown'> {
    const bounds = this.bounds(waitMs);
    const handle = this.client.workflow.getHandle(workflowId);
    const send = () =>
      sendUpdate(
        this.client,
        () =>
          handle.startUpdate(awaitDecisionUpdate, {
            args: [{ approvalId, waitMs, deadline: bounds.deadline }],
            updateId: randomUUID(),
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          }),
        bounds,
        (error) => failureType(error) === UNPROCESSED_UPDATE,
      );
    try {
      // Ended by `signal` when no one waits for it any more: its calls are cancelled.
      return await (signal ? this.client.withAbortSignal(signal, send) : send());
    } catch (error) {
      if (signal?.aborted) return 'unknown';
      if (failureType(error) === CALL_ENDED || error instanceof WorkflowNotFoundError) {
        return 'ended';
      }
      if (error instanceof Unanswered || isTemporalUnavailable(error)) return 'unknown';
      throw error;
    }
  }

  /** Whether Postgres still has the approval pending and unexpired (a held call's truth). */
  private async stillHeld(approvalId: string): Promise<boolean> {
    try {
      const now = await findApprovalById(this.sql, approvalId);
      return now?.status === 'pending' && now.expiresAt.getTime() > Date.now();
    } catch {
      return false;
    }
  }

  /** Approve or reject through the workflow that holds the call; 409 once it is not pending. */
  async decide(
    approval: Approval,
    input: Omit<DecisionInput, 'approvalId' | 'deadline'>,
  ): Promise<ApprovalView> {
    // Recording a decision is one short write: it shares the deadline's grace, nothing more.
    const bounds = this.bounds(0);
    const decision: DecisionInput = {
      ...input,
      approvalId: approval.id,
      deadline: bounds.deadline,
    };
    // One Update id for every attempt, so a retried decision the server did accept counts once.
    const updateId = randomUUID();
    const handle = this.client.workflow.getHandle(approval.workflowId);
    try {
      return await sendUpdate(
        this.client,
        () =>
          handle.startUpdate(decideUpdate, {
            args: [decision],
            updateId,
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          }),
        bounds,
        (error) => failureType(error) === UNPROCESSED_UPDATE,
      );
    } catch (error) {
      if (error instanceof Unanswered) {
        const seconds = Math.ceil(this.limits.deadlineMs / 1000);
        throw error.state === 'not_taken'
          ? new ServiceUnavailableError(
              `The decision was not applied: Gatehouse could not record it within ${seconds} s, ` +
                'and it will not be applied later. Decide again.',
              { approval: { id: approval.id }, decision_state: 'not_applied' },
            )
          : new ServiceUnavailableError(
              'The decision was taken but not yet confirmed; it may still be recorded. Read the ' +
                'approval before deciding again.',
              { approval: { id: approval.id }, decision_state: 'pending' },
            );
      }
      if (failureType(error) === DECIDER_REFUSED && error instanceof WorkflowUpdateFailedError) {
        throw new InsufficientAccessError(error.cause?.message ?? 'This decider may not decide.', {
          approval: { id: approval.id },
        });
      }
      if (failureType(error) === GRANT_REFUSED && error instanceof WorkflowUpdateFailedError) {
        throw new InvalidRequestError(error.cause?.message ?? 'This grant cannot be made.', [
          { path: 'grant', message: error.cause?.message ?? 'refused' },
        ]);
      }
      if (error instanceof WorkflowNotFoundError && (await this.stillHeld(approval.id))) {
        // Postgres says the call is held, so its workflow is there: Temporal answers "not found"
        // while it is starting up (its namespaces not loaded yet). Nothing was decided.
        const seconds = Math.ceil(this.limits.deadlineMs / 1000);
        throw new ServiceUnavailableError(
          `The decision was not applied: Gatehouse could not reach the held call within ${seconds} s, ` +
            'and it will not be applied later. Decide again.',
          { approval: { id: approval.id }, decision_state: 'not_applied' },
        );
      }
      if (failureType(error) === APPROVAL_NOT_PENDING || error instanceof WorkflowNotFoundError) {
        throw new ConflictError(`Approval ${approval.id} is no longer pending.`, {
          approval: { id: approval.id },
        });
      }
      throw error;
    }
  }
}

/** The API's CallWorkflows, bounded by the configured request deadline. */
export function callWorkflowsFor(deps: {
  temporal: Client;
  sql: Sql;
  config: {
    temporal: { taskQueue: string };
    requests: RequestLimits;
    encryption: Keyring;
    api?: { publicUrl: string };
    observability?: { traceUrlTemplate: string | null };
  };
}): CallWorkflows {
  const { api, observability } = deps.config;
  return new CallWorkflows(
    deps.temporal,
    deps.sql,
    deps.config.encryption,
    deps.config.temporal.taskQueue,
    deps.config.requests,
    api
      ? { publicUrl: api.publicUrl, traceUrlTemplate: observability?.traceUrlTemplate ?? null }
      : null,
  );
}
