import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { GrantStatus, GrantView } from '../../workflows/grant-types.js';

/** One grant: while live, the agent's `ask` on the action becomes `allow`. */
export interface Grant {
  id: string;
  environmentId: string;
  agentId: string;
  action: string;
  scope: CallScope;
  /** null: for any user. */
  userExternalId: string | null;
  approvalId: string;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  revokedBy: string | null;
}

const columns = (sql: Db) => sql`
  id, environment_id, agent_id, action, scope, user_external_id, approval_id, created_by,
  created_at, expires_at, revoked_at, revoked_by`;

export function grantStatus(grant: Grant, now: Date): GrantStatus {
  if (grant.revokedAt !== null) return 'revoked';
  return grant.expiresAt > now ? 'active' : 'expired';
}

export function grantView(grant: Grant, now = new Date()): GrantView {
  return {
    id: grant.id,
    agent_id: grant.agentId,
    action: grant.action,
    scope: grant.scope,
    for: grant.userExternalId === null ? 'any_user' : 'user',
    user: grant.userExternalId,
    approval_id: grant.approvalId,
    created_by: grant.createdBy,
    created_at: grant.createdAt.toISOString(),
    expires_at: grant.expiresAt.toISOString(),
    status: grantStatus(grant, now),
    revoked_at: grant.revokedAt?.toISOString() ?? null,
    revoked_by: grant.revokedBy,
  };
}

export type NewGrant = Pick<
  Grant,
  'environmentId' | 'agentId' | 'action' | 'scope' | 'userExternalId' | 'approvalId' | 'createdBy'
> & {
  /** The workflow's clock at the decision (epoch ms): the grant runs from here. */
  at: number;
  seconds: number;
};

/**
 * Makes the grant an approval carried; written again (a re-run activity), it is the same grant:
 * an approval makes one grant at most.
 */
export async function insertGrant(sql: Db, input: NewGrant): Promise<Grant> {
  const from = new Date(input.at);
  const until = new Date(input.at + input.seconds * 1000);
  const [row]: [Grant?] = await sql`
    insert into grants (id, environment_id, agent_id, action, scope, user_external_id,
      approval_id, created_by, created_at, expires_at)
    values (${uuidv7()}, ${input.environmentId}, ${input.agentId}, ${input.action}, ${input.scope},
      ${input.userExternalId}, ${input.approvalId}, ${input.createdBy}, ${from}, ${until})
    on conflict (approval_id) do nothing
    returning ${columns(sql)}`;
  if (row) return row;
  const [again]: [Grant?] = await sql`
    select ${columns(sql)} from grants where approval_id = ${input.approvalId}`;
  if (!again) throw new Error(`the grant of approval ${input.approvalId} was not written`);
  return again;
}

/** What a call looks a live grant up by. */
export interface GrantLookup {
  environmentId: string;
  agentId: string;
  /** As audit names it: `<app>.<action>`, or `<app>.proxy`. */
  action: string;
  scope: CallScope;
  userExternalId: string;
  /** The workflow's clock (epoch ms): a grant applies strictly before its `expires_at`. */
  at: number;
}

/** The live grant's columns as the preparing statement returns them (null: none). */
export interface LiveGrantRow {
  grantId: string | null;
  grantUser: string | null;
  grantExpiresAt: Date | null;
}

/**
 * The live grant for a call, as a subquery for the statement that prepares it (a lateral join,
 * so it costs no round trip): not revoked, not ended by `at`, for the user or any user. Of
 * several, the one that lasts longest is named.
 */
export function liveGrantSubquery(sql: Db, lookup: GrantLookup) {
  return sql`
    select g.id as grant_id, g.user_external_id as grant_user, g.expires_at as grant_expires_at
    from grants g
    where g.environment_id = ${lookup.environmentId} and g.agent_id = ${lookup.agentId}
      and g.action = ${lookup.action} and g.scope = ${lookup.scope}
      and g.revoked_at is null and g.expires_at > ${new Date(lookup.at)}
      and (g.user_external_id is null or g.user_external_id = ${lookup.userExternalId})
    order by g.expires_at desc
    limit 1`;
}

export interface GrantFilters {
  agentId?: string;
  action?: string;
  /** Grants that apply to this user: theirs, and those for any user. */
  userExternalId?: string;
  status?: GrantStatus;
  /** The caller's own agent: its grants are never shown to it. */
  hiddenAgentId: string;
  /** Keyset paging: only grants older than this id (UUIDv7 ids are time-ordered). */
  before?: string;
}

/** An environment's grants, newest first, those of the asking agent left out. */
export async function listGrants(
  sql: Db,
  environmentId: string,
  filters: GrantFilters,
  limit: number,
): Promise<Grant[]> {
  const statusIs =
    filters.status === undefined
      ? sql``
      : filters.status === 'revoked'
        ? sql`and revoked_at is not null`
        : filters.status === 'active'
          ? sql`and revoked_at is null and expires_at > now()`
          : sql`and revoked_at is null and expires_at <= now()`;
  const user = filters.userExternalId;
  return sql<Grant[]>`
    select ${columns(sql)} from grants
    where environment_id = ${environmentId} and agent_id <> ${filters.hiddenAgentId} ${statusIs}
      ${filters.agentId === undefined ? sql`` : sql`and agent_id = ${filters.agentId}`}
      ${filters.action === undefined ? sql`` : sql`and action = ${filters.action}`}
      ${user === undefined ? sql`` : sql`and (user_external_id = ${user} or user_external_id is null)`}
      ${filters.before === undefined ? sql`` : sql`and id < ${filters.before}`}
    order by id desc
    limit ${limit}`;
}

/**
 * Revokes a grant from the next call on; a grant revoked already is left as it is. null when the
 * environment has no such grant, or it is the asking agent's own.
 */
export async function revokeGrant(
  sql: Db,
  environmentId: string,
  id: string,
  revokedBy: string,
): Promise<Grant | null> {
  const [row]: [Grant?] = await sql`
    with revoked as (
      update grants set revoked_at = now(), revoked_by = ${revokedBy}
      where environment_id = ${environmentId} and id = ${id} and agent_id <> ${revokedBy}
        and revoked_at is null
      returning ${columns(sql)}
    )
    select * from revoked
    union all
    select ${columns(sql)} from grants
    where environment_id = ${environmentId} and id = ${id} and agent_id <> ${revokedBy}
      and not exists (select 1 from revoked)`;
  return row ?? null;
}

/** The grant an approval made, if it made one. */
export async function findGrantOfApproval(sql: Db, approvalId: string): Promise<Grant | null> {
  const [row]: [Grant?] = await sql`
    select ${columns(sql)} from grants where approval_id = ${approvalId}`;
  return row ?? null;
}
