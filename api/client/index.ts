/**
 * `import { Gatehouse } from 'gatehouse/client'`: the typed client for backends (README "Use the
 * TypeScript client"). It depends on nothing of the service but its served OpenAPI documents,
 * whose types are generated into ./generated.
 */
export { Gatehouse } from './gatehouse.js';
export type {
  ActionResult,
  CallOptions,
  GatehouseOptions,
  ProxyMethod,
  ProxyRequest,
} from './gatehouse.js';
export type { Duration } from './duration.js';
export type { Operation, TypedClient } from './typed-client.js';
export * from './error-classes.js';
export {
  GatehouseError,
  UnexpectedResponseError,
  type AnsweredWith,
  type ApprovalStatus,
  type ErrorBody,
  type ErrorCode,
  type HeldApproval,
} from './gatehouse-error.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type ApprovalDecidedEvent,
  type ApprovalRequestedEvent,
  type DecisionLink,
  type WebhookApproval,
  type WebhookEvent,
} from './webhooks.js';
export type {
  components as ConnectedUserSchemas,
  operations as ConnectedUserOperations,
  paths as ConnectedUserPaths,
} from './generated/connected-users.js';
export type {
  components as ManagementSchemas,
  operations as ManagementOperations,
  paths as ManagementPaths,
} from './generated/management.js';
