import {
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type Client,
} from '@temporalio/client';
import { callFingerprint } from '../../api/calls/fingerprint.js';
import { CALL_WORKFLOW, callUpdate, callWorkflowId } from '../../workflows/call-messages.js';
import type {
  CallAnswer,
  CallRequest,
  CallTargetInput,
  CallTicket,
} from '../../workflows/call-types.js';
import type { CallStack } from './call-stack.js';

/** The CallRequest the API makes of an action run, as `callRequestFor` makes it. */
export function actionCallRequest(
  stack: Pick<CallStack, 'environmentId' | 'config'>,
  call: {
    agentId: string;
    user: string;
    action: string;
    scope: CallTargetInput['scope'];
    input: Record<string, unknown>;
    idempotencyKey?: string;
  },
): CallRequest {
  const target: CallTargetInput = {
    kind: 'action',
    action: call.action,
    app: call.action.slice(0, call.action.indexOf('.')),
    scope: call.scope,
    input: call.input,
  };
  return {
    environmentId: stack.environmentId,
    environmentName: 'test',
    agentId: call.agentId,
    userExternalId: call.user,
    via: 'api',
    fingerprint: callFingerprint({
      environmentId: stack.environmentId,
      agentId: call.agentId,
      userExternalId: call.user,
      target,
      idempotencyKey: call.idempotencyKey,
    }),
    target,
    retryWindowSeconds: stack.config.approvals.retryWindowSeconds,
    ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
  };
}

/**
 * The call's Update as the API sends it (api/temporal/call-workflows.ts): update-with-start on
 * the call's workflow id, conflict policy use-existing, reuse allow-duplicate. With a ticket
 * already answered, it is what the client SDK's own loop or the API's retry sends again.
 */
export function sendCallUpdate(
  temporal: Client,
  taskQueue: string,
  call: CallRequest,
  ticket: CallTicket,
): Promise<CallAnswer> {
  return temporal.workflow.executeUpdateWithStart(callUpdate, {
    args: [ticket],
    updateId: ticket.requestId,
    startWorkflowOperation: new WithStartWorkflowOperation(CALL_WORKFLOW, {
      taskQueue,
      workflowId: callWorkflowId(call),
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      args: [call, ticket],
    }),
  });
}
