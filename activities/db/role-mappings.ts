import type { Db, Sql } from '../../infra/database/client.js';

/**
 * What a person may do in an environment, given by the groups the identity provider says they
 * are in: `approver` decides held calls, `operator` governs (policies, apps, connections),
 * `admin` does both and maps groups to roles.
 */
export const ROLES = ['approver', 'operator', 'admin'] as const;

export type Role = (typeof ROLES)[number];

/** One group's roles in an environment. */
export interface RoleMapping {
  group: string;
  roles: Role[];
}

/** In the order of ROLES, each once: the same set always reads the same. */
function ordered(roles: Iterable<string>): Role[] {
  const held = new Set(roles);
  return ROLES.filter((role) => held.has(role));
}

/** The environment's mappings, by group name; each group's roles in the order of ROLES. */
export async function listRoleMappings(sql: Db, environmentId: string): Promise<RoleMapping[]> {
  const rows = await sql<{ groupName: string; roles: string[] }[]>`
    select group_name, array_agg(role) as roles from role_mappings
    where environment_id = ${environmentId}
    group by group_name order by group_name`;
  return rows.map((row) => ({ group: row.groupName, roles: ordered(row.roles) }));
}

/**
 * Replaces the group's roles in the environment with `roles` (none: the group is no longer
 * mapped), in one transaction. Two changes of one group take turns, so the roles kept are those
 * of the last one whole, never a mix of both.
 */
export async function setGroupRoles(
  sql: Sql,
  environmentId: string,
  group: string,
  roles: readonly Role[],
): Promise<Role[]> {
  const kept = ordered(roles);
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`role-mappings:${environmentId}:${group}`}))`;
    await tx`
      delete from role_mappings
      where environment_id = ${environmentId} and group_name = ${group}`;
    if (kept.length > 0) {
      await tx`
        insert into role_mappings (environment_id, group_name, role)
        select ${environmentId}, ${group}, unnest(${kept}::text[])`;
    }
  });
  return kept;
}

/** The roles that any of these groups holds in the environment, each once, in the order of ROLES. */
export async function rolesOfGroups(
  sql: Db,
  environmentId: string,
  groups: readonly string[],
): Promise<Role[]> {
  if (groups.length === 0) return [];
  const rows = await sql<{ role: string }[]>`
    select distinct role from role_mappings
    where environment_id = ${environmentId} and group_name = any(${[...groups]}::text[])`;
  return ordered(rows.map((row) => row.role));
}
