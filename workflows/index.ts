// The workflows the worker registers. Each file tells one durable story.
export { healthCheck } from './health-check.js';
export { completeConnection } from './connect.js';
export { checkMcpConnection, startMcpConnection } from './mcp-connect.js';
export { refreshConnection } from './refresh.js';
export { revokeConnection, deleteConnectedUser } from './revoke.js';
export { governedCall } from './call.js';
export { approvalDecidedWebhook, approvalRequestedWebhook } from './webhook.js';
export { engineFloor } from './engine-floor.js';
export { nexusRunAction } from './nexus/run-action.js';
export { mcpToolTask } from './mcp-task.js';
export { sealAuditEvents } from './seal-audit.js';
export { auditEventWebhook } from './audit-webhook.js';
