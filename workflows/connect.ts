import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ConnectOutcome } from './connection-types.js';

// An authorization code is good for one exchange: a retry could only fail, so there is none.
const { exchangeCode } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * The end of a hosted connect flow: the user came back from the app's consent page, and the
 * code they brought is exchanged for tokens. Its input is the attempt id alone; the code and
 * the PKCE verifier stay sealed in Postgres, out of Temporal's history.
 */
export async function completeConnection(attemptId: string): Promise<ConnectOutcome> {
  return exchangeCode(attemptId);
}
