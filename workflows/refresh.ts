import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
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
  try {
    return await refreshTokens(request);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    // The app's token endpoint stayed out of reach: say so, so callers answer 503, not 500.
    return {
      connectionId: request.connectionId,
      status: 'unavailable',
      refreshed: false,
      lastRefreshedAt: null,
      accessTokenExpiresAt: null,
    };
  }
}
