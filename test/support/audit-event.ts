import type { NewAuditEvent } from '../../activities/db/audit-events.js';

/** The audit row of an allowed `acme.create_task` by user `u_<n>`, as the call workflow writes it. */
export function newAuditEvent(
  environmentId: string,
  n: number,
  overrides: Partial<NewAuditEvent> = {},
): NewAuditEvent {
  return {
    environmentId,
    action: 'acme.create_task',
    scope: 'write',
    decision: 'allowed',
    reason: null,
    agentId: 'agent',
    via: 'api',
    userExternalId: `u_${String(n)}`,
    connectedUserId: null,
    connectionId: null,
    approvalId: null,
    request: { action: 'acme.create_task', input: { title: `task ${String(n)}` } },
    response: { ok: true },
    traceId: `trace-${String(n)}`,
    policyId: 'default',
    policyVersion: 1,
    ...overrides,
  };
}
