import type { Db } from '../../infra/database/client.js';
import { approvalColumns, type Approval } from './approvals.js';

/** Whom an inbox belongs to: the `requested_from` entries that name this person. */
export interface InboxOwner {
  email: string;
  groups: readonly string[];
}

export interface InboxFilters {
  agentId?: string;
  userExternalId?: string;
  /** An app: its actions and its proxy calls. */
  app?: string;
  action?: string;
  /** Keyset paging: only approvals older than this id (UUIDv7 ids are time-ordered). */
  before?: string;
}

/** The `requested_from` entries that ask this person: by email (any case) and by group. */
export function entriesAsking(owner: InboxOwner): string[] {
  return [`person:${owner.email.toLowerCase()}`, ...owner.groups.map((group) => `group:${group}`)];
}

/**
 * A person's inbox: the pending, unexpired approvals of the environment that ask them, by email or
 * group, or that name nobody (any approver decides those), newest first. The `person:` entries of
 * policies are stored as written, so their case is folded here. One statement, reading each
 * approval as findApproval does (approvalColumns): reading the page's ids first and then each
 * approval on its own cost a round trip per row, most of an inbox page's time.
 */
export async function listInbox(
  sql: Db,
  environmentId: string,
  owner: InboxOwner,
  filters: InboxFilters,
  limit: number,
): Promise<Approval[]> {
  const asking = entriesAsking(owner);
  return sql<Approval[]>`
    select ${approvalColumns(sql)} from approvals
    where environment_id = ${environmentId} and status = 'pending' and expires_at > now()
      and (cardinality(requested_from) = 0 or exists (
        select 1 from unnest(requested_from) as asked(entry)
        where case when asked.entry like 'person:%' then lower(asked.entry) else asked.entry end
          = any (${asking}::text[])))
      ${filters.agentId === undefined ? sql`` : sql`and agent_id = ${filters.agentId}`}
      ${filters.userExternalId === undefined ? sql`` : sql`and user_external_id = ${filters.userExternalId}`}
      ${filters.app === undefined ? sql`` : sql`and split_part(action, '.', 1) = ${filters.app}`}
      ${filters.action === undefined ? sql`` : sql`and action = ${filters.action}`}
      ${filters.before === undefined ? sql`` : sql`and id < ${filters.before}`}
    order by id desc
    limit ${limit}`;
}
