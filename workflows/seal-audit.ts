import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { SealResult } from '../activities/audit/seal-audit.js';

const { sealAudit } = proxyActivities<Activities>({
  // A large backlog (the first seal after an upgrade) is read and hashed in one go.
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
});

/** Started by the `audit-seal` Temporal Schedule: seals each environment's events. */
export async function sealAuditEvents(): Promise<SealResult> {
  return sealAudit();
}
