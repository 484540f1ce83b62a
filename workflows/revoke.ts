import { getExternalWorkflowHandle, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { cancelSignal } from './call-messages.js';

const { revokeAtProvider } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

const { markRevoked, deleteUserRecords, pendingApprovalWorkflows } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
});

/** Revocation at the app is best effort: our side forgets the tokens whatever the app says. */
async function revokeAtApp(connectionId: string): Promise<void> {
  try {
    await revokeAtProvider(connectionId);
  } catch (error) {
    log.warn('revocation at the app failed; revoking locally', {
      connectionId,
      error: error instanceof Error ? error.message : 'unknown',
    });
  }
}

/** `DELETE /v1/connections/{id}`: revoke at the app, then drop the tokens and mark it revoked. */
export async function revokeConnection(
  connectionId: string,
): Promise<{ id: string; status: string }> {
  await revokeAtApp(connectionId);
  return markRevoked(connectionId);
}

/** A held call that ended on its own meanwhile needs no cancelling. */
async function cancelHeldCall(workflowId: string): Promise<void> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(cancelSignal, 'user deleted');
  } catch (error) {
    log.info('held call already ended', {
      workflowId,
      error: error instanceof Error ? error.message : 'unknown',
    });
  }
}

/**
 * `DELETE /v1/users/{user}`: the user's held calls cancelled, every connection revoked at its
 * app, then the user and tokens deleted. Audit stays.
 */
export async function deleteConnectedUser(input: {
  userId: string;
  connectionIds: string[];
}): Promise<void> {
  const heldCalls = await pendingApprovalWorkflows(input.userId);
  await Promise.all(heldCalls.map((workflowId) => cancelHeldCall(workflowId)));
  await Promise.all(input.connectionIds.map((id) => revokeAtApp(id)));
  await deleteUserRecords(input.userId);
}
