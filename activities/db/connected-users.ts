import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';

export interface ConnectedUser {
  id: string;
  environmentId: string;
  externalId: string;
  customer: string | null;
  createdAt: Date;
}

export interface ConnectedUserSummary extends ConnectedUser {
  connectionCount: number;
  calls7d: number;
  lastActiveAt: Date | null;
}

export type UserStatusFilter = 'active' | 'needs_reconnect' | 'disconnected';

/**
 * Finds the user by the caller's id, creating it on first sight. A later link may set or change
 * the customer label; omitting it keeps the current one.
 */
export async function upsertConnectedUser(
  sql: Db,
  environmentId: string,
  externalId: string,
  customer: string | undefined,
): Promise<ConnectedUser> {
  const [row]: [ConnectedUser?] = await sql`
    insert into connected_users (id, environment_id, external_id, customer)
    values (${uuidv7()}, ${environmentId}, ${externalId}, ${customer ?? null})
    on conflict (environment_id, external_id)
      do update set customer = coalesce(excluded.customer, connected_users.customer)
    returning id, environment_id, external_id, customer, created_at`;
  if (!row) throw new Error('connected user upsert returned nothing');
  return row;
}

const summaryColumns = (sql: Db) => sql`
  u.id, u.environment_id, u.external_id, u.customer, u.created_at,
  (select count(*)::int from connections c where c.connected_user_id = u.id and c.status <> 'revoked') as connection_count,
  (select count(*)::int from audit_events a
    where a.environment_id = u.environment_id and a.user_external_id = u.external_id
      and a.time > now() - interval '7 days') as calls7d,
  (select max(a.time) from audit_events a
    where a.environment_id = u.environment_id and a.user_external_id = u.external_id) as last_active_at`;

export async function findConnectedUser(
  sql: Db,
  environmentId: string,
  externalId: string,
): Promise<ConnectedUserSummary | null> {
  const [row]: [ConnectedUserSummary?] = await sql`
    select ${summaryColumns(sql)} from connected_users u
    where u.environment_id = ${environmentId} and u.external_id = ${externalId}`;
  return row ?? null;
}

const statusCondition = (sql: Db, status: UserStatusFilter | undefined) => {
  switch (status) {
    case undefined:
      return sql``;
    case 'active':
      return sql`and exists (select 1 from connections c where c.connected_user_id = u.id and c.status = 'active')`;
    case 'needs_reconnect':
      return sql`and exists (select 1 from connections c where c.connected_user_id = u.id and c.status = 'expired')`;
    case 'disconnected':
      return sql`and not exists (select 1 from connections c where c.connected_user_id = u.id and c.status in ('active', 'expired'))`;
  }
};

/** Newest first; `after` is the id of the last user of the previous page (ids are UUIDv7). */
export async function listConnectedUsers(
  sql: Db,
  environmentId: string,
  filter: { customer?: string; status?: UserStatusFilter; after?: string; limit: number },
): Promise<ConnectedUserSummary[]> {
  return sql<ConnectedUserSummary[]>`
    select ${summaryColumns(sql)} from connected_users u
    where u.environment_id = ${environmentId}
      ${filter.customer === undefined ? sql`` : sql`and u.customer = ${filter.customer}`}
      ${statusCondition(sql, filter.status)}
      ${filter.after === undefined ? sql`` : sql`and u.id < ${filter.after}`}
    order by u.id desc
    limit ${filter.limit}`;
}

/** Deletes the user, its connections and their tokens; audit events stay. */
export async function deleteConnectedUser(sql: Db, id: string): Promise<boolean> {
  const rows = await sql`delete from connected_users where id = ${id} returning id`;
  return rows.length === 1;
}
