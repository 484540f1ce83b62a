import { z } from 'zod';
import { NOTICE_ROUNDS, type NoticeRow } from '../../activities/db/approval-notifications.js';
import { NOTIFICATION_KINDS } from '../../activities/notifications/kinds.js';

/** What the approval record shows of the messages sent about it: where, and how each went. */
export const approvalNoticeSchema = z.object({
  channel: z.enum(NOTIFICATION_KINDS),
  round: z.enum(NOTICE_ROUNDS).meta({
    description:
      '`requested` when the call was held, `reminder` after the policy’s remind_after_seconds, `escalation` to escalate_to',
  }),
  addressee: z.string().meta({
    description:
      'The `requested_from` entry the message answers (`role:approver` when nobody was named)',
  }),
  to: z.string().meta({
    description:
      'Where it went: an e-mail address, `#<channel id>` or `@<email>` (a Slack direct message), a Teams webhook’s host',
  }),
  status: z.enum(['pending', 'sending', 'sent', 'retrying', 'failed', 'skipped']).meta({
    description:
      '`sent`; `retrying` (the last attempt failed, another follows, with backoff, until the approval expires); `failed` (will not be tried again: `last_error` says why); `skipped` (nothing to send: decided first, or the channel removed); `pending`/`sending` while under way',
  }),
  attempts: z.int(),
  last_error: z.string().nullable(),
  sent_at: z.iso.datetime().nullable(),
});

export type ApprovalNotice = z.infer<typeof approvalNoticeSchema>;

export function approvalNotice(row: NoticeRow): ApprovalNotice {
  return {
    channel: row.channel,
    round: row.round,
    addressee: row.addressee,
    to: row.shownTo,
    status: row.status,
    attempts: row.attempts,
    last_error: row.lastError,
    sent_at: row.sentAt?.toISOString() ?? null,
  };
}
