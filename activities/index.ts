import type { ActivityDeps } from './deps.js';
import { awaitApprovalDecisionActivity } from './approvals/await-decision.js';
import { callRecordActivities } from './calls/call-records.js';
import { prepareCallActivity } from './calls/prepare-call.js';
import { callUpstreamActivity } from './calls/upstream-request.js';
import { serveReadActivity } from './calls/serve-read.js';
import { connectionRecordActivities } from './connections/records.js';
import { checkDatabaseActivity } from './health/check-database.js';
import { sealAuditActivity } from './audit/seal-audit.js';
import { mcpAuthActivities } from './mcp-auth/activities.js';
import { mcpTaskActivities } from './mcp-tasks/mcp-task-activities.js';
import { nexusActivities } from './nexus/nexus-activities.js';
import { exchangeCodeActivity } from './oauth/exchange-code.js';
import { refreshTokensActivity } from './oauth/refresh-tokens.js';
import { revokeAtProviderActivity } from './oauth/revoke-at-provider.js';
import { noticeActivities } from './notifications/notice-activities.js';
import { webhookActivities } from './webhooks/webhook-activities.js';
import { startApprovalDeliveryActivity } from './webhooks/start-delivery.js';

/**
 * Every activity the worker registers, built from its dependencies so tests and the worker wire
 * the same code. Workflows see this object's type only.
 */
export function createActivities(deps: ActivityDeps) {
  const prepareCall = prepareCallActivity(deps);
  const callUpstream = callUpstreamActivity(deps);
  return {
    checkDatabase: checkDatabaseActivity(deps.sql),
    exchangeCode: exchangeCodeActivity(deps),
    refreshTokens: refreshTokensActivity(deps),
    revokeAtProvider: revokeAtProviderActivity(deps),
    ...mcpAuthActivities(deps),
    ...connectionRecordActivities(deps.sql),
    prepareCall,
    callUpstream,
    serveRead: serveReadActivity({
      sql: deps.sql,
      temporal: deps.temporal,
      keyring: deps.config.encryption,
      prepare: prepareCall,
      callUpstream,
    }),
    ...callRecordActivities(deps),
    ...webhookActivities(deps),
    ...noticeActivities(deps),
    startApprovalDelivery: startApprovalDeliveryActivity(deps),
    awaitApprovalDecision: awaitApprovalDecisionActivity(deps),
    ...nexusActivities(deps),
    ...mcpTaskActivities(deps),
    sealAudit: sealAuditActivity({
      sql: deps.sql,
      signingKey: deps.config.audit.signingKey,
      settleSeconds: deps.config.audit.settleSeconds,
      logger: deps.logger,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
