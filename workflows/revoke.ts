import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { revokeAtProvider } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

const { markRevoked, deleteUserRecords } = proxyActivities<Activities>({
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

/** `DELETE /v1/users/{user}`: every connection revoked at its app, then the user and tokens deleted. */
export async function deleteConnectedUser(input: {
  userId: string;
  connectionIds: string[];
}): Promise<void> {
  await Promise.all(input.connectionIds.map((id) => revokeAtApp(id)));
  await deleteUserRecords(input.userId);
}
