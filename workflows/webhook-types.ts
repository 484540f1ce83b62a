/**
 * An approval event to deliver (`approval.requested`, `approval.decided`). Ids only: the payload
 * (and, for `approval.requested`, its decision links) is made from Postgres at delivery time.
 * Its own module, with no imports, so the delivery activities take it without importing the
 * workflows that run them (no import cycle).
 */
export interface ApprovalEvent {
  environmentId: string;
  approvalId: string;
  /** Stable across retries (`webhook-id`), so receivers can de-duplicate. */
  eventId: string;
}

/** The `webhook/audit.event/<environment id>` workflow's input. */
export interface AuditEventDelivery {
  environmentId: string;
  /** How long it sleeps when it has caught up (AUDIT_WEBHOOK_POLL_SECONDS). */
  pollSeconds: number;
}

export const auditEventWorkflowId = (environmentId: string) =>
  `webhook/audit.event/${environmentId}`;
