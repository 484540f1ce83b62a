import type { Db } from '../../infra/database/client.js';
import { insertAuditEvents } from '../db/audit-events.js';
import { OPERATOR_VIA } from '../mcp-apps/registry-audit.js';

/** The audit actions of an operator's change of the approval notifications. */
export const NOTIFICATION_ACTIONS = {
  channels: 'notifications.channels',
  routes: 'notifications.routes',
  optOuts: 'notifications.opt_outs',
} as const;

/**
 * Who changed the notifications: a key (its agent id, and the key itself, since several keys may
 * share an agent id) through the management API, or `cli` from the command line.
 */
export interface NotificationActor {
  environmentId: string;
  agentId: string;
  channel: 'api' | 'cli';
  key?: { id: string; name: string };
  traceId: string;
}

export interface NotificationChange {
  action: (typeof NOTIFICATION_ACTIONS)[keyof typeof NOTIFICATION_ACTIONS];
  /** One sentence: what holds now. */
  reason: string;
  /** What changed, as answers show it: never a secret (a secret only as `<field>_set`). */
  details: Record<string, unknown>;
}

/**
 * Records an operator's change of where approvers are told: who is told of held calls, and
 * through what, is part of how they are governed (a route removed silences an approver), so it is
 * on the same tamper-evident record as the calls, as a change of the role mappings is (`via:
 * "operator"`, no user or scope, `allowed`). Written after the change, as the role mappings' are:
 * a failure to record answers the request with an error, and sending it again records it.
 */
export async function recordNotificationChange(
  sql: Db,
  actor: NotificationActor,
  change: NotificationChange,
): Promise<void> {
  await insertAuditEvents(sql, [
    {
      environmentId: actor.environmentId,
      action: change.action,
      scope: null,
      decision: 'allowed',
      reason: change.reason,
      agentId: actor.agentId,
      via: OPERATOR_VIA,
      userExternalId: null,
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: {
        action: change.action,
        user: null,
        via: OPERATOR_VIA,
        channel: actor.channel,
        ...(actor.key ? { key: actor.key } : {}),
        ...change.details,
      },
      response: null,
      traceId: actor.traceId,
      policyId: null,
      policyVersion: null,
    },
  ]);
}
