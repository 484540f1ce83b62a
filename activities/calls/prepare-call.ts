import type { Db, Sql } from '../../infra/database/client.js';
import type { CallRequest, CallTargetInput, Preparation } from '../../workflows/call-types.js';
import { listActions } from '../../workflows/catalog/index.js';
import { evaluatePolicy, governingPolicy, type CallTarget } from '../../workflows/policy.js';
import { listPolicies } from '../db/policies.js';

interface UserConnection {
  connectedUserId: string;
  connectionId: string | null;
  status: 'active' | 'expired' | 'revoked' | null;
}

/** The user and their live connection to the app, in one round trip. */
async function findUserConnection(
  sql: Db,
  environmentId: string,
  externalId: string,
  app: string,
): Promise<UserConnection | null> {
  const [row]: [UserConnection?] = await sql`
    select u.id as connected_user_id, c.id as connection_id, c.status
    from connected_users u
    left join connections c on c.connected_user_id = u.id and c.app = ${app} and c.status <> 'revoked'
    where u.environment_id = ${environmentId} and u.external_id = ${externalId}`;
  return row ?? null;
}

/**
 * What policy decides on. A proxy call is bounded by the rules of its app's catalog actions
 * (DESIGN.md §4), which the pure evaluator cannot look up: they are listed here.
 */
function policyTarget(target: CallTargetInput): CallTarget {
  if (target.kind === 'action') {
    return { kind: 'action', action: target.action, app: target.app, scope: target.scope };
  }
  const actions = listActions(target.app).map((action) => ({
    action: `${action.app}.${action.name}`,
    scope: action.scope,
  }));
  return { kind: 'proxy', app: target.app, scope: target.scope, actions };
}

/**
 * Run-action rules (SPEC.md §4.1): the user's connection to the app first, then the verdict of
 * the policy that governs the calling agent. A local activity: two short reads.
 */
export function prepareCallActivity(sql: Sql) {
  return async (call: CallRequest): Promise<Preparation> => {
    const [found, policies] = await Promise.all([
      findUserConnection(sql, call.environmentId, call.userExternalId, call.target.app),
      listPolicies(sql, call.environmentId),
    ]);
    if (found?.connectionId == null || found.status === null || found.status === 'revoked') {
      return {
        ok: false,
        code: 'connection_required',
        connectedUserId: found?.connectedUserId ?? null,
        connectionId: null,
      };
    }
    if (found.status === 'expired') {
      return {
        ok: false,
        code: 'connection_expired',
        connectedUserId: found.connectedUserId,
        connectionId: found.connectionId,
      };
    }
    const policy = governingPolicy(policies, call.agentId);
    // Each environment is seeded with a `*` policy; should it be edited away, nothing runs.
    if (!policy) {
      return {
        ok: true,
        connectedUserId: found.connectedUserId,
        connectionId: found.connectionId,
        decision: 'deny',
        reason: `no policy governs agent ${call.agentId}`,
        rule: 'no policy',
        policyId: null,
        policyVersion: null,
        approval: { requested_from: [], ttl_seconds: 0 },
      };
    }
    const verdict = evaluatePolicy(policy, policyTarget(call.target));
    return {
      ok: true,
      connectedUserId: found.connectedUserId,
      connectionId: found.connectionId,
      decision: verdict.decision,
      reason: `policy ${policy.id} v${String(policy.version)}: ${verdict.matched} → ${verdict.decision}`,
      policyId: policy.id,
      policyVersion: policy.version,
      rule: verdict.matched,
      approval: policy.approval,
    };
  };
}
