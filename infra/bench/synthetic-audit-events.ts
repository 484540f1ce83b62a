import type { Db } from '../database/client.js';

/**
 * `count` audit events numbered `from` on, written behind the service's back as one statement
 * (the insert trigger numbers and hashes each, as for the service's own rows): a write of
 * `action` (default `acme.create_task`) with ~400 bytes of notes, every tenth `blocked`, by user
 * `u_<n % 100>` unless `user` is given, an hour old plus n ms. `idSeed` keeps the ids
 * (UUIDv7-shaped, from md5, so in no time order: a seeding's events are spread evenly through
 * the log's id order) of two seedings apart. For the benchmarks and the tests of the trail.
 */
export async function insertSyntheticAuditEvents(
  sql: Db,
  environmentId: string,
  {
    from = 1,
    count,
    idSeed = '',
    user,
    action = 'acme.create_task',
  }: {
    from?: number;
    count: number;
    idSeed?: string;
    user?: string;
    action?: string;
  },
): Promise<void> {
  await sql`
    insert into audit_events (id, environment_id, time, action, scope, decision, agent_id, via,
      user_external_id, request, response, trace_id)
    select uuid_in(overlay(overlay(md5(${idSeed} || n::text) placing '7' from 13)
        placing '8' from 17)::cstring),
      ${environmentId}, now() - interval '1 hour' + n * interval '1 ms', ${action}::text,
      'write', case when n % 10 = 0 then 'blocked' else 'allowed' end, 'agent', 'api',
      coalesce(${user ?? null}::text, 'u_' || (n % 100)),
      jsonb_build_object('action', ${action}::text,
        'input', jsonb_build_object('title', 'task ' || n, 'notes', repeat('é', 200))),
      jsonb_build_object('ok', true, 'data', jsonb_build_object('id', 't_' || n)),
      ${idSeed} || 'trace-' || n
    from generate_series(${from}::int, ${from + count - 1}::int) as n`;
}
