import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RefreshRequest, RefreshResult } from './connection-types.js';

const { refreshTokens } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

/**
 * A connection's token refresh. Started as `refresh/<connection id>` with conflict policy
 * use-existing, so every caller across the cluster that needs a refresh while one is running
 * joins it: one token request, however many callers.
 */
export async function refreshConnection(request: RefreshRequest): Promise<RefreshResult> {
  return refreshTokens(request);
}
