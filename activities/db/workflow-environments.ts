import type { Db } from '../../infra/database/client.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The record a workflow id names, by the id shapes the API and the workflows give them. */
type Owner =
  | { kind: 'environment'; name: string }
  | { kind: 'connection' | 'user' | 'attempt' | 'approval'; id: string };

/**
 * `call/<environment>/…` names its environment (older ids had no action, same
 * prefix), and so does `nexus/<environment>/<operation request id>`; `refresh/`
 * and `revoke/<connection id>`, `delete-user/<user id>`, `connect/<attempt id>` and
 * `webhook/<kind>/<approval id>` name a record that belongs to one.
 * Anything else (health checks, the benchmark's floor, workflows started by hand) names none.
 */
function ownerOf(workflowId: string): Owner | null {
  const parts = workflowId.split('/');
  const [prefix, first, second] = parts;
  const id = (value: string | undefined) => (value && UUID.test(value) ? value : null);
  switch (prefix) {
    case 'call':
    case 'nexus':
      return parts.length >= 3 && first ? { kind: 'environment', name: first } : null;
    case 'refresh':
    case 'revoke': {
      const connection = parts.length === 2 ? id(first) : null;
      return connection ? { kind: 'connection', id: connection } : null;
    }
    case 'delete-user': {
      const user = parts.length === 2 ? id(first) : null;
      return user ? { kind: 'user', id: user } : null;
    }
    case 'connect': {
      const attempt = parts.length === 2 ? id(first) : null;
      return attempt ? { kind: 'attempt', id: attempt } : null;
    }
    case 'webhook': {
      const approval = parts.length === 3 ? id(second) : null;
      return approval ? { kind: 'approval', id: approval } : null;
    }
    default:
      return null;
  }
}

/** id → environment id of the records found; one statement, none for no ids. */
async function environmentsBy(
  ids: string[],
  query: (ids: string[]) => Promise<{ id: string; environmentId: string }[]>,
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await query(ids);
  return new Map(rows.map((row) => [row.id, row.environmentId]));
}

/**
 * The environment each workflow belongs to (its id), or null when it names none or its record
 * is gone (a deleted user's workflows). One statement per kind of record, whatever the number of
 * workflows: the codec endpoint asks this for every payload of a history at once.
 */
export async function environmentsOfWorkflows(
  sql: Db,
  workflowIds: readonly string[],
): Promise<Map<string, string | null>> {
  const owners = new Map(workflowIds.map((workflowId) => [workflowId, ownerOf(workflowId)]));
  const wanted = (kind: Owner['kind']) => [
    ...new Set(
      [...owners.values()].flatMap((owner) =>
        owner?.kind === kind ? [owner.kind === 'environment' ? owner.name : owner.id] : [],
      ),
    ),
  ];
  const [environments, connections, users, attempts, approvals] = await Promise.all([
    environmentsBy(
      wanted('environment'),
      (names) => sql<{ id: string; environmentId: string }[]>`
        select name as id, id as environment_id from environments where name = any(${names}::text[])`,
    ),
    environmentsBy(
      wanted('connection'),
      (ids) => sql<{ id: string; environmentId: string }[]>`
        select id, environment_id from connections where id = any(${ids}::uuid[])`,
    ),
    environmentsBy(
      wanted('user'),
      (ids) => sql<{ id: string; environmentId: string }[]>`
        select id, environment_id from connected_users where id = any(${ids}::uuid[])`,
    ),
    environmentsBy(
      wanted('attempt'),
      (ids) => sql<{ id: string; environmentId: string }[]>`
        select a.id, l.environment_id from oauth_attempts a
        join connect_links l on l.id = a.link_id
        where a.id = any(${ids}::uuid[])`,
    ),
    environmentsBy(
      wanted('approval'),
      (ids) => sql<{ id: string; environmentId: string }[]>`
        select id, environment_id from approvals where id = any(${ids}::uuid[])`,
    ),
  ]);
  const found: Record<Owner['kind'], Map<string, string>> = {
    environment: environments,
    connection: connections,
    user: users,
    attempt: attempts,
    approval: approvals,
  };
  return new Map(
    [...owners].map(([workflowId, owner]) => [
      workflowId,
      owner
        ? (found[owner.kind].get(owner.kind === 'environment' ? owner.name : owner.id) ?? null)
        : null,
    ]),
  );
}
