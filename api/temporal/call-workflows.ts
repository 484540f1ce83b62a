import {
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  isGrpcServiceError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordCallAudit } from '../../activities/calls/call-records.js';
import { approvalView, findPendingApproval, type Approval } from '../../activities/db/approvals.js';
import type { Sql } from '../../infra/database/client.js';
import { answerHeld } from '../../workflows/call-answers.js';
import {
  APPROVAL_NOT_PENDING,
  CALL_ENDED,
  CALL_WORKFLOW,
  DECIDER_REFUSED,
  callUpdate,
  callWorkflowId,
  decideUpdate,
} from '../../workflows/call-messages.js';
import type {
  ApprovalView,
  CallAnswer,
  CallRequest,
  CallTicket,
  DecisionInput,
} from '../../workflows/call-types.js';
import { searchAttributes } from '../../workflows/search-attributes.js';
import { ConflictError, InsufficientAccessError } from '../errors.js';

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

/** Repeats `operation` while it fails transiently, for at most ten seconds, with jittered backoff. */
async function retryTransient<T>(
  operation: () => Promise<T>,
  retryable: (error: unknown) => boolean,
): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!retryable(error) || Date.now() > deadline) throw error;
      await sleep(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
    }
  }
}

/**
 * How the API hands governed calls to Temporal (DESIGN.md §4): each request is an Update on
 * `call/<environment>/<fingerprint>`, started if need be (update-with-start, conflict policy
 * use-existing, reuse allow-duplicate), and its result is the HTTP answer.
 */
export class CallWorkflows {
  constructor(
    private readonly client: Client,
    private readonly sql: Sql,
    private readonly taskQueue: string,
  ) {}

  async run(call: CallRequest, ticket: CallTicket): Promise<CallAnswer> {
    // Repeats of a held call are answered from Postgres: the workflow would only say the same,
    // and fifty waiting callers must not crowd its ten Update slots.
    const pending = await findPendingApproval(this.sql, call.environmentId, call.fingerprint);
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
    return this.update(call, ticket);
  }

  private async update(call: CallRequest, ticket: CallTicket): Promise<CallAnswer> {
    const { target } = call;
    const action = target.kind === 'action' ? target.action : `${target.app}.proxy`;
    return retryTransient(
      () =>
        this.client.workflow.executeUpdateWithStart(callUpdate, {
          args: [ticket],
          updateId: ticket.requestId,
          startWorkflowOperation: new WithStartWorkflowOperation(CALL_WORKFLOW, {
            taskQueue: this.taskQueue,
            workflowId: callWorkflowId(call.environmentName, call.fingerprint),
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
            args: [call],
            // DESIGN.md §8: what an operator filters and reads in the UI. Never the call's input.
            typedSearchAttributes: [
              { key: searchAttributes.environment, value: call.environmentName },
              { key: searchAttributes.agent, value: call.agentId },
              { key: searchAttributes.user, value: call.userExternalId },
              { key: searchAttributes.action, value: action },
            ],
            staticSummary: `${action} for user ${call.userExternalId}, agent ${call.agentId}`,
          }),
        }),
      // A call workflow that just ended (or closed between its start and the Update) is
      // replaced by the next attempt's start; the audit log counts the request id once.
      (error) =>
        failureType(error) === CALL_ENDED ||
        error instanceof WorkflowNotFoundError ||
        transient(error),
    );
  }

  /** Approve or reject through the workflow that holds the call; 409 once it is not pending. */
  async decide(
    approval: Approval,
    input: Omit<DecisionInput, 'approvalId'>,
  ): Promise<ApprovalView> {
    // One Update id for every attempt, so a retried decision the server did accept counts once.
    const updateId = randomUUID();
    const handle = this.client.workflow.getHandle(approval.workflowId);
    try {
      return await retryTransient(
        () =>
          handle.executeUpdate(decideUpdate, {
            args: [{ ...input, approvalId: approval.id }],
            updateId,
          }),
        transient,
      );
    } catch (error) {
      if (failureType(error) === DECIDER_REFUSED && error instanceof WorkflowUpdateFailedError) {
        throw new InsufficientAccessError(error.cause?.message ?? 'This decider may not decide.', {
          approval: { id: approval.id },
        });
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
