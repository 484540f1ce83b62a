/**
 * How a workflow that speaks for a caller (a Nexus operation, an MCP task) waits for a held
 * call's approval to be decided: in the call workflow itself, through an activity, until the
 * approval's expiry (activities/approvals/await-decision.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ApprovalStatus } from './call-types.js';

/**
 * Each attempt waits up to five minutes in the call workflow (its awaitDecision Update, a minute
 * at a time) and heartbeats every few seconds: a replaced worker picks the wait up.
 */
const { awaitApprovalDecision } = proxyActivities<Activities>({
  startToCloseTimeout: '6 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/**
 * How long past its expiry a pending approval is still waited for: the call workflow settles the
 * expiry on its own timer, which may fire a little after the approval's `expires_at`.
 */
const EXPIRY_GRACE_MS = 60_000;

/** Where the approval stands once it is no longer pending (or is past its expiry). */
export async function decisionOf(approvalId: string, expiresAt: string): Promise<ApprovalStatus> {
  const deadline = Date.parse(expiresAt) + EXPIRY_GRACE_MS;
  for (;;) {
    const status = await awaitApprovalDecision(approvalId, deadline);
    if (status !== 'pending') return status;
    if (Date.now() >= deadline) return 'expired';
  }
}
