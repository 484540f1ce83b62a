import type { Db } from '../../infra/database/client.js';
import type { NotificationKind } from '../notifications/kinds.js';

/** A person who asked not to be told through a kind of channel, in one environment. */
export interface NotificationOptOut {
  /** Lower-cased: people are compared by email without case. */
  email: string;
  kind: NotificationKind;
  createdAt: Date;
  /** The person themselves (`person:<email>`), a key's agent id, or `cli`. */
  createdBy: string;
}

/** The environment's opt-outs, by email and kind. */
export async function listNotificationOptOuts(
  sql: Db,
  environmentId: string,
): Promise<NotificationOptOut[]> {
  return sql<NotificationOptOut[]>`
    select email, kind, created_at, created_by from notification_opt_outs
    where environment_id = ${environmentId}
    order by email, array_position(array['email', 'slack', 'teams'], kind)`;
}

/** The opt-outs of these people (emails, any case) in the environment. */
export async function optOutsOf(
  sql: Db,
  environmentId: string,
  emails: readonly string[],
): Promise<{ email: string; kind: NotificationKind }[]> {
  if (emails.length === 0) return [];
  return sql<{ email: string; kind: NotificationKind }[]>`
    select email, kind from notification_opt_outs
    where environment_id = ${environmentId}
      and email = any(${emails.map((email) => email.toLowerCase())}::text[])`;
}

/** True when this made the opt-out; false when the person had opted out already. */
export async function addNotificationOptOut(
  sql: Db,
  environmentId: string,
  email: string,
  kind: NotificationKind,
  createdBy: string,
): Promise<boolean> {
  const rows = await sql`
    insert into notification_opt_outs (environment_id, email, kind, created_by)
    values (${environmentId}, ${email.toLowerCase()}, ${kind}, ${createdBy})
    on conflict (environment_id, email, kind) do nothing`;
  return rows.count > 0;
}

/** True when the person had opted out and is now told again; false when they had not. */
export async function removeNotificationOptOut(
  sql: Db,
  environmentId: string,
  email: string,
  kind: NotificationKind,
): Promise<boolean> {
  const rows = await sql`
    delete from notification_opt_outs
    where environment_id = ${environmentId} and email = ${email.toLowerCase()} and kind = ${kind}`;
  return rows.count > 0;
}
