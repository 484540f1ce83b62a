import { ApplicationFailure, WorkflowIdReusePolicy } from '@temporalio/common';
import { WorkflowRunOperationHandler, startWorkflow } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import { presentedKey, recognisedCaller } from '../../api/http/authenticate.js';
import { ApiError, InvalidApiKeyError } from '../../api/errors.js';
import type { Sql } from '../../infra/database/client.js';
import {
  gatehouseService,
  type RunActionInput,
  type RunActionResult,
} from '../../workflows/nexus/gatehouse-service.js';
import { searchAttributes } from '../../workflows/search-attributes.js';
import type { nexusRunAction } from '../../workflows/nexus/run-action.js';
import {
  NEXUS_RUN_ACTION_WORKFLOW,
  nexusWorkflowId,
  type NexusCallerRef,
} from '../../workflows/nexus/run-action-types.js';

/** Nexus headers are case-insensitive, like HTTP's: the caller may send `Authorization`. */
function header(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

/**
 * The operation's caller, from the API key in its headers (`authorization: Bearer gk_…` or
 * `x-api-key`), recognised exactly as REST recognises it. A wrong, revoked or missing key fails
 * the operation at once, `invalid_api_key`, retried by nobody; the refusal names no key.
 */
async function callerOf(sql: Sql, headers: Record<string, string>): Promise<NexusCallerRef> {
  try {
    const caller = await recognisedCaller(
      sql,
      presentedKey(header(headers, 'authorization'), header(headers, 'x-api-key')),
    );
    const environment = header(headers, 'gatehouse-environment');
    if (environment !== undefined && environment !== caller.environmentName) {
      throw new InvalidApiKeyError(`This key does not belong to the environment "${environment}".`);
    }
    return {
      keyId: caller.keyId,
      environmentName: caller.environmentName,
      agentId: caller.agentId,
    };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // A request Nexus itself calls unauthenticated: failed at once, never retried.
    throw new nexus.HandlerError('UNAUTHENTICATED', error.message, {
      cause: ApplicationFailure.create({
        type: error.code,
        message: error.message,
        nonRetryable: true,
      }),
    });
  }
}

/**
 * The `gatehouse` service's handlers. `runAction` is a workflow-run operation: the
 * handler recognises the key, then starts `nexusRunAction` with the key's id, never the key, so
 * nothing of the secret reaches a history. The workflow id comes from the Nexus request id, which
 * Temporal keeps across its retries of the start: a retried start finds the same workflow. The
 * SDK's default cancel cancels that workflow, which cancels the approval.
 */
export function gatehouseServiceHandler(deps: { sql: Sql }) {
  return nexus.serviceHandler(gatehouseService, {
    runAction: new WorkflowRunOperationHandler<RunActionInput, RunActionResult>(
      async (ctx, input) => {
        const caller = await callerOf(deps.sql, ctx.headers);
        const action = typeof input.action === 'string' ? input.action : '';
        const user = typeof input.user === 'string' ? input.user : '';
        return startWorkflow<typeof nexusRunAction>(ctx, NEXUS_RUN_ACTION_WORKFLOW, {
          workflowId: nexusWorkflowId(caller.environmentName, ctx.requestId),
          // One operation, one workflow: a closed one is never started again under its id.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [{ caller, request: input, operationRequestId: ctx.requestId }],
          // What an operator filters by in the Temporal UI: known from the key, never the input.
          typedSearchAttributes: [
            { key: searchAttributes.environment, value: caller.environmentName },
            { key: searchAttributes.agent, value: caller.agentId },
          ],
          // Readable in the Temporal UI: the codec leaves this shape of call summary clear.
          staticSummary: `${action} for user ${user}, agent ${caller.agentId}`,
        });
      },
    ),
  });
}
