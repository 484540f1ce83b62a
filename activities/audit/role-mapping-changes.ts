import type { Sql } from '../../infra/database/client.js';
import { insertAuditEvents } from '../db/audit-events.js';
import { setGroupRoles, type Role } from '../db/role-mappings.js';
import { OPERATOR_VIA } from '../mcp-apps/registry-audit.js';

/** The audit action of every change of a group's roles, made through the API or the command line. */
export const ROLE_MAPPING_ACTION = 'people.role_mappings';

/**
 * Who changed the mappings: a key (its agent id, and the key itself, since several keys may
 * share an agent id) through the management API, or `cli` from the command line.
 */
export interface RoleMappingActor {
  environmentId: string;
  agentId: string;
  channel: 'api' | 'cli';
  key?: { id: string; name: string };
  traceId: string;
}

/**
 * Replaces a group's roles in the actor's environment (none: the group is no longer mapped), then
 * records it in the audit trail: who may decide held calls is part of how they are governed, so a
 * change of it is on the same tamper-evident record as the calls, as an operator's change of a
 * remote MCP app is (`via: "operator"`, no user or scope, `allowed`). Written after the change, as
 * the console records its changes: a failure to record answers the request with an error, and
 * sending it again records it.
 */
export async function changeGroupRoles(
  sql: Sql,
  actor: RoleMappingActor,
  group: string,
  roles: readonly Role[],
): Promise<Role[]> {
  const kept = await setGroupRoles(sql, actor.environmentId, group, roles);
  await insertAuditEvents(sql, [
    {
      environmentId: actor.environmentId,
      action: ROLE_MAPPING_ACTION,
      scope: null,
      decision: 'allowed',
      reason:
        kept.length === 0
          ? `group "${group}" holds no role now`
          : `group "${group}" holds ${kept.join(', ')} now`,
      agentId: actor.agentId,
      via: OPERATOR_VIA,
      userExternalId: null,
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: {
        action: ROLE_MAPPING_ACTION,
        user: null,
        via: OPERATOR_VIA,
        channel: actor.channel,
        ...(actor.key ? { key: actor.key } : {}),
        group,
        roles: kept,
      },
      response: null,
      traceId: actor.traceId,
      policyId: null,
      policyVersion: null,
    },
  ]);
  return kept;
}
