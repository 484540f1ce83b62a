import type { Payload } from '@temporalio/common';
import type { Caller } from '../../activities/db/api-keys.js';
import { environmentsOfWorkflows } from '../../activities/db/workflow-environments.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { isEncrypted, sealedWorkflowId } from '../../infra/temporal/payload-codec.js';
import { ApiError } from '../errors.js';

/**
 * Nothing crosses environments, and workflow payloads are every call's input and answer: the
 * codec endpoint opens a request's payloads only when each sealed one names a workflow of the
 * caller's environment. Payloads that name none (sealed before they
 * named their workflow, or by an operator's encode) belong to no environment. The refusal is the
 * API's answer to any id of another environment: 404, saying nothing of what was there. A label
 * that lies is caught when the payload fails to open: the workflow id is bound to its seal.
 */
export async function refuseOtherEnvironments(
  sql: Sql,
  caller: Caller,
  payloads: readonly Payload[],
  log: Logger,
  /** Where the refusal leads: the sign-in page, and `gatehouse dev`'s one step. */
  advice: { signInAt: string; devHint: string },
): Promise<void> {
  const sealed = payloads.filter(isEncrypted);
  if (sealed.length === 0) return;
  const workflowIds = sealed.map(sealedWorkflowId);
  const named = workflowIds.filter((id): id is string => id !== null);
  const environments =
    named.length === workflowIds.length
      ? await environmentsOfWorkflows(sql, [...new Set(named)])
      : null;
  if (environments && [...environments.values()].every((id) => id === caller.environmentId)) {
    return;
  }
  log.warn(
    { keyId: caller.keyId, environment: caller.environmentName, payloads: payloads.length },
    'workflow payloads of another environment, or of none, refused',
  );
  throw new ApiError(
    'not_found',
    'These workflow payloads do not open here. Payloads open only for a full key of the ' +
      'environment whose workflow they belong to: those of another environment, and those ' +
      'that name no workflow (sealed before payloads named their workflow, or by /codec/encode), ' +
      `do not. To read a workflow's payloads, sign in at ${advice.signInAt} with a full key of ` +
      `its environment.${advice.devHint}`,
  );
}
