import type { Db } from '../../infra/database/client.js';
import type { AuditDecision } from '../../workflows/call-types.js';
import { insertAuditEvents } from '../db/audit-events.js';

/** What an operator did to a remote MCP app. */
export type RegistryOperation = 'register' | 'refresh' | 'accept' | 'update' | 'delete';

/**
 * Who did it, and through what: the API (a key's agent), the command line (`cli`), or a person
 * in the console (`console`, agent `person:<email>`).
 */
export interface RegistryActor {
  environmentId: string;
  agentId: string;
  channel: 'api' | 'cli' | 'console';
  traceId: string;
}

/** How every registry event is recorded in `via`, apart from calls (`api`, `mcp`). */
export const OPERATOR_VIA = 'operator';

/**
 * One audit event for a change of what an environment's agents may call through a remote MCP
 * app: the app's tools as a whole (`<app>.*`, what a policy rule `<app>.*` names), no scope and
 * no user, `via: "operator"`. `allowed` for an operator's own act (register, accept, update,
 * delete); `blocked` for a refresh that found the server's tools changed: the changes are held
 * until an operator accepts them, as a held call is until a person approves it. Written in the
 * change's own transaction.
 */
export async function recordRegistryEvent(
  tx: Db,
  actor: RegistryActor,
  event: {
    app: string;
    operation: RegistryOperation;
    decision: Extract<AuditDecision, 'allowed' | 'blocked'>;
    reason: string;
    request: Record<string, unknown>;
    response: Record<string, unknown>;
  },
): Promise<void> {
  const action = `${event.app}.*`;
  await insertAuditEvents(tx, [
    {
      environmentId: actor.environmentId,
      action,
      scope: null,
      decision: event.decision,
      reason: event.reason,
      agentId: actor.agentId,
      via: OPERATOR_VIA,
      userExternalId: null,
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: {
        action,
        user: null,
        via: OPERATOR_VIA,
        operation: event.operation,
        channel: actor.channel,
        ...event.request,
      },
      response: event.response,
      traceId: actor.traceId,
      policyId: null,
      policyVersion: null,
    },
  ]);
}
