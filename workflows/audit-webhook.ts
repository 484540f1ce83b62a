import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { AuditEventDelivery } from './webhook-types.js';

// The approval deliveries' backoff (workflows/webhook.ts), without their 24-hour limit: an audit
// batch is never given up, since the batches after it wait for it (delivery is in order).
const { deliverAuditEvents } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

/** Rounds before the history is handed to a fresh run. */
const ROUNDS_PER_RUN = 500;

/**
 * Delivers an environment's audit events to its webhook endpoint in batches, in order, for as
 * long as the endpoint takes them: one running workflow per environment (its id is the
 * environment's), started when audit delivery is turned on, ending when it is turned off or the
 * endpoint removed. Caught up, it sleeps `pollSeconds` and looks again.
 */
export async function auditEventWebhook(input: AuditEventDelivery): Promise<'off'> {
  for (let round = 0; round < ROUNDS_PER_RUN; round += 1) {
    const outcome = await deliverAuditEvents(input.environmentId);
    if (outcome === 'off') return 'off';
    if (workflowInfo().continueAsNewSuggested) break;
    if (outcome === 'caught_up') await sleep(input.pollSeconds * 1000);
  }
  return continueAsNew<typeof auditEventWebhook>(input);
}
