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
import { setTimeout as sleep } from 'node:timers/promises';
import { recordCallAudit } from '../../activities/calls/call-records.js';
import { approvalView, findPendingApproval, type Approval } from '../../activities/db/approvals.js';
import type { Sql } from '../../infra/database/client.js';
import { answerHeld } from '../../workflows/call-answers.js';
import {
  APPROVAL_NOT_PENDING,
  CALL_ENDED,
  CALL_WORKFLOW,
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
import { ConflictError } from '../errors.js';

/**
 * gRPC statuses an Update may meet while many callers crowd one workflow: RESOURCE_EXHAUSTED
 * (the cap of in-flight Updates per workflow, default 10), ABORTED and UNAVAILABLE (the server
 * dropped a speculative workflow task that carried the Update).
 */
const RETRYABLE_GRPC: ReadonlySet<number> = new Set([8, 10, 14]);

function failureType(error: unknown): string | undefined {
  if (!(error instanceof WorkflowUpdateFailedError)) return undefined;
  return error.cause instanceof ApplicationFailure ? (error.cause.type ?? undefined) : undefined;
}

/**
 * Worth another try at once: the workflow just ended (or closed between its start and the
 * Update), or the server pushed back. Safe to repeat: the Update id is the request's id, so the
 * server and the audit log count a repeated one once.
 */
function transient(error: unknown): boolean {
  if (failureType(error) === CALL_ENDED) return true;
  if (error instanceof WorkflowNotFoundError) return true;
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && RETRYABLE_GRPC.has(grpc.code);
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
    const deadline = Date.now() + 10_000;
    for (let attempt = 0; ; attempt++) {
      const start = new WithStartWorkflowOperation(CALL_WORKFLOW, {
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
      });
      try {
        return await this.client.workflow.executeUpdateWithStart(callUpdate, {
          args: [ticket],
          updateId: ticket.requestId,
          startWorkflowOperation: start,
        });
      } catch (error) {
        if (!transient(error) || Date.now() > deadline) throw error;
        await sleep(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
      }
    }
  }

  /** Approve or reject through the workflow that holds the call; 409 once it is not pending. */
  async decide(
    approval: Approval,
    input: Omit<DecisionInput, 'approvalId'>,
  ): Promise<ApprovalView> {
    try {
      return await this.client.workflow
        .getHandle(approval.workflowId)
        .executeUpdate(decideUpdate, { args: [{ ...input, approvalId: approval.id }] });
    } catch (error) {
      if (failureType(error) === APPROVAL_NOT_PENDING || error instanceof WorkflowNotFoundError) {
        throw new ConflictError(`Approval ${approval.id} is no longer pending.`, {
          approval: { id: approval.id },
        });
      }
      throw error;
    }
  }
}
