import type postgres from 'postgres';
import type { Db } from '../../infra/database/client.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { Decision, PolicyDocument, PolicyRule } from '../../workflows/policy.js';

export interface StoredPolicy extends PolicyDocument {
  name: string;
  environmentName: string;
  updatedAt: Date;
  updatedBy: string;
}

export interface PolicyInput {
  name: string;
  agents: string[];
  defaults: Record<CallScope, Decision>;
  rules: PolicyRule[];
  approval: PolicyDocument['approval'];
}

/** Our interfaces have no index signatures, which postgres' JSON type wants: a JSON round trip. */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as postgres.JSONValue;

const columns = (sql: Db) => sql`
  p.id, p.name, e.name as environment_name, p.agents, p.version, p.defaults, p.rules, p.approval,
  p.updated_at, p.updated_by`;

export async function listPolicies(sql: Db, environmentId: string): Promise<StoredPolicy[]> {
  return sql<StoredPolicy[]>`
    select ${columns(sql)} from policies p join environments e on e.id = p.environment_id
    where p.environment_id = ${environmentId} order by p.id`;
}

export async function findPolicy(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<StoredPolicy | null> {
  const [row]: [StoredPolicy?] = await sql`
    select ${columns(sql)} from policies p join environments e on e.id = p.environment_id
    where p.environment_id = ${environmentId} and p.id = ${id}`;
  return row ?? null;
}

/** One version as it was written: what decided the calls whose audit names it. */
export async function findPolicyVersion(
  sql: Db,
  environmentId: string,
  id: string,
  version: number,
): Promise<StoredPolicy | null> {
  const [row]: [StoredPolicy?] = await sql`
    select v.policy_id as id, v.name, e.name as environment_name, v.agents, v.version, v.defaults,
           v.rules, v.approval, v.created_at as updated_at, v.created_by as updated_by
    from policy_versions v join environments e on e.id = v.environment_id
    where v.environment_id = ${environmentId} and v.policy_id = ${id} and v.version = ${version}`;
  return row ?? null;
}

export type ReplaceOutcome =
  { ok: true; version: number } | { ok: false; agent: string; claimedBy: string };

/**
 * Writes a new version of the policy (version 1 when the id is new). Two policies may not claim
 * the same agent: the environment's policies are locked while that is checked.
 */
export async function replacePolicy(
  sql: Db,
  environmentId: string,
  id: string,
  input: PolicyInput,
  updatedBy: string,
): Promise<ReplaceOutcome> {
  const others = await sql<{ id: string; agents: string[] }[]>`
    select id, agents from policies where environment_id = ${environmentId} for update`;
  for (const other of others) {
    if (other.id === id) continue;
    const clash = input.agents.find((agent) => other.agents.includes(agent));
    if (clash !== undefined) return { ok: false, agent: clash, claimedBy: other.id };
  }
  const [row]: [{ version: number }?] = await sql`
    insert into policies (environment_id, id, name, agents, version, defaults, rules, approval, updated_by)
    values (${environmentId}, ${id}, ${input.name}, ${input.agents}, 1, ${sql.json(asJson(input.defaults))},
            ${sql.json(asJson(input.rules))}, ${sql.json(asJson(input.approval))}, ${updatedBy})
    on conflict (environment_id, id) do update set
      name = excluded.name, agents = excluded.agents, version = policies.version + 1,
      defaults = excluded.defaults, rules = excluded.rules, approval = excluded.approval,
      updated_by = excluded.updated_by, updated_at = now()
    returning version`;
  if (!row) throw new Error(`policy ${id} was not written`);
  await sql`
    insert into policy_versions (environment_id, policy_id, version, name, agents, defaults, rules, approval, created_by)
    select environment_id, id, version, name, agents, defaults, rules, approval, updated_by
    from policies where environment_id = ${environmentId} and id = ${id}`;
  return { ok: true, version: row.version };
}
