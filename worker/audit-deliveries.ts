import type { Client } from '@temporalio/client';
import { environmentsWithAuditDelivery } from '../activities/db/webhook-endpoints.js';
import { ensureAuditEventDelivery } from '../activities/webhooks/start-audit-delivery.js';
import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';

/**
 * At worker start-up, every environment whose endpoint takes `audit.event` has its delivery
 * workflow running: the API starts it when delivery is turned on, and this brings
 * back one that an operator terminated. A running one is left as it is.
 */
export async function resumeAuditDeliveries(
  client: Client,
  config: Config,
  sql: Sql,
  logger: Pick<Logger, 'info'>,
): Promise<void> {
  const environments = await environmentsWithAuditDelivery(sql);
  for (const environmentId of environments) {
    await ensureAuditEventDelivery(client, config.temporal.taskQueue, {
      environmentId,
      pollSeconds: config.audit.webhookPollSeconds,
    });
  }
  if (environments.length > 0) {
    logger.info({ environments: environments.length }, 'audit.event deliveries running');
  }
}
