import type { Db } from '../../infra/database/client.js';
import type { StoredPolicy } from './policies.js';

/**
 * A policy's versions, newest first, from below version `before` when given. Asks for one more
 * row than the page so the caller knows whether more follow.
 */
export async function listPolicyVersions(
  sql: Db,
  environmentId: string,
  id: string,
  page: { before?: number; limit: number },
): Promise<StoredPolicy[]> {
  return sql<StoredPolicy[]>`
    select v.policy_id as id, v.name, e.name as environment_name, v.agents, v.version, v.defaults,
           v.rules, v.approval, v.created_at as updated_at, v.created_by as updated_by
    from policy_versions v join environments e on e.id = v.environment_id
    where v.environment_id = ${environmentId} and v.policy_id = ${id}
      ${page.before === undefined ? sql`` : sql`and v.version < ${page.before}`}
    order by v.version desc
    limit ${page.limit + 1}`;
}
