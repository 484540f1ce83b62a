import type { Db } from '../../infra/database/client.js';
import type { NotificationKind } from '../notifications/kinds.js';

/**
 * The approval_notifications rows: what the call workflow sent to whom about an approval, one row
 * per approval, round and destination (migration 032 says why each column is there).
 */

export const NOTICE_ROUNDS = ['requested', 'reminder', 'escalation'] as const;
export type NoticeRound = (typeof NOTICE_ROUNDS)[number];

export type NoticeStatus = 'pending' | 'sending' | 'sent' | 'retrying' | 'failed' | 'skipped';

export interface NoticeRow {
  approvalId: string;
  round: NoticeRound;
  targetKey: string;
  channel: NotificationKind;
  addressee: string;
  shownTo: string;
  status: NoticeStatus;
  attempts: number;
  lastError: string | null;
  sentAt: Date | null;
  slackChannelId: string | null;
  slackTs: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PlannedNotice {
  targetKey: string;
  channel: NotificationKind;
  addressee: string;
  shownTo: string;
}

const columns = (sql: Db) => sql`
  approval_id, round, target_key, channel, addressee, shown_to, status, attempts, last_error,
  sent_at, slack_channel_id, slack_ts, created_at, updated_at`;

/** Writes a round's rows, pending; planning the same round again keeps the rows it finds. */
export async function planNotices(
  sql: Db,
  environmentId: string,
  approvalId: string,
  round: NoticeRound,
  notices: readonly PlannedNotice[],
): Promise<void> {
  if (notices.length === 0) return;
  const rows = notices.map((notice) => ({
    approval_id: approvalId,
    round,
    target_key: notice.targetKey,
    environment_id: environmentId,
    channel: notice.channel,
    addressee: notice.addressee,
    shown_to: notice.shownTo,
    status: 'pending',
  }));
  await sql`
    insert into approval_notifications ${sql(
      rows,
      'approval_id',
      'round',
      'target_key',
      'environment_id',
      'channel',
      'addressee',
      'shown_to',
      'status',
    )}
    on conflict (approval_id, round, target_key) do nothing`;
}

/**
 * Starts an attempt: the row as it was before (so the sender knows whether an earlier attempt
 * was cut off mid-send: `sending`), now `sending` with one more attempt. Null when the row is
 * gone (its approval deleted). A row already sent is answered as it is, unchanged.
 */
export async function claimNotice(
  sql: Db,
  approvalId: string,
  round: NoticeRound,
  targetKey: string,
): Promise<NoticeRow | null> {
  // One statement: `before` reads the row as it was (a data-modifying CTE's siblings see the
  // snapshot from before it), and the update starts this attempt unless the row is settled.
  const [before]: [NoticeRow?] = await sql`
    with before as (
      select ${columns(sql)} from approval_notifications
      where approval_id = ${approvalId} and round = ${round} and target_key = ${targetKey}
    ), started as (
      update approval_notifications
      set status = 'sending', attempts = attempts + 1, updated_at = now()
      where approval_id = ${approvalId} and round = ${round} and target_key = ${targetKey}
        and status not in ('sent', 'skipped')
    )
    select * from before`;
  return before ?? null;
}

/** Where a Slack message is about to go, kept before it is posted so a cut-off post can be found. */
export async function noteSlackChannel(
  sql: Db,
  approvalId: string,
  round: NoticeRound,
  targetKey: string,
  slackChannelId: string,
): Promise<void> {
  await sql`
    update approval_notifications set slack_channel_id = ${slackChannelId}, updated_at = now()
    where approval_id = ${approvalId} and round = ${round} and target_key = ${targetKey}`;
}

export async function markNoticeSent(
  sql: Db,
  approvalId: string,
  round: NoticeRound,
  targetKey: string,
  slack: { channelId: string; ts: string } | null = null,
): Promise<void> {
  await sql`
    update approval_notifications
    set status = 'sent', sent_at = now(), last_error = null, updated_at = now(),
      slack_channel_id = coalesce(${slack?.channelId ?? null}, slack_channel_id),
      slack_ts = coalesce(${slack?.ts ?? null}, slack_ts)
    where approval_id = ${approvalId} and round = ${round} and target_key = ${targetKey}`;
}

/** An attempt failed: `retrying` when Temporal tries again, `failed` when nothing will. */
export async function markNoticeFailed(
  sql: Db,
  approvalId: string,
  round: NoticeRound,
  targetKey: string,
  status: 'retrying' | 'failed' | 'skipped',
  reason: string,
): Promise<void> {
  await sql`
    update approval_notifications
    set status = ${status}, last_error = ${reason.slice(0, 500)}, updated_at = now()
    where approval_id = ${approvalId} and round = ${round} and target_key = ${targetKey}
      and status <> 'sent'`;
}

/** Every notification of an approval, oldest first (the approval record shows them). */
export async function noticesOf(sql: Db, approvalId: string): Promise<NoticeRow[]> {
  return sql<NoticeRow[]>`
    select ${columns(sql)} from approval_notifications where approval_id = ${approvalId}
    order by created_at, round, channel, shown_to, target_key`;
}

/** The Slack messages posted about an approval, to update when it changes. */
export async function slackMessagesOf(
  sql: Db,
  approvalId: string,
): Promise<{ channelId: string; ts: string }[]> {
  const rows = await sql<{ slackChannelId: string; slackTs: string }[]>`
    select slack_channel_id, slack_ts from approval_notifications
    where approval_id = ${approvalId} and slack_ts is not null and slack_channel_id is not null
    order by created_at, target_key`;
  return rows.map((row) => ({ channelId: row.slackChannelId, ts: row.slackTs }));
}
