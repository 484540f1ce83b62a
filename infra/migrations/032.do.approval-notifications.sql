-- What the call workflow sent to whom about an approval, and how it went: one row per approval,
-- round and destination. A row is written (pending) before its message is sent, marked `sending`
-- by each attempt before it speaks to the channel, and `sent` right after the channel took it, so
-- an attempt repeated after a crash or a timeout finds the message sent and sends nothing, and an
-- attempt cut off mid-send is known as one (Slack's is then looked up before anything is posted
-- again). The approval record shows these rows; nothing secret is kept here (a Teams webhook by
-- its host, never its URL; no link, token or message body).
create table approval_notifications (
  approval_id uuid not null references approvals (id) on delete cascade,
  -- `requested` when the call is held, `reminder` when nobody decided after the policy's
  -- remind_after_seconds, `escalation` to the escalation entries after escalate_after_seconds.
  round text not null check (round in ('requested', 'reminder', 'escalation')),
  -- The target's key (the approval, channel and a digest of the destination): stable, whatever
  -- else changes, so planning a round twice plans the same rows.
  target_key text not null,
  environment_id uuid not null references environments (id) on delete cascade,
  channel text not null check (channel in ('email', 'slack', 'teams')),
  -- The requested_from entry the message answers (or role:approver).
  addressee text not null,
  -- Where it went, in words fit to show: an address, `#C123` or `@ada@example.com` for Slack, a
  -- Teams webhook's host.
  shown_to text not null,
  status text not null check (status in ('pending', 'sending', 'sent', 'retrying', 'failed',
    'skipped')),
  attempts integer not null default 0,
  -- The channel's own words on the last failure, cut, or why nothing was sent (skipped).
  last_error text,
  sent_at timestamptz,
  -- Slack's address of the posted message, for chat.update when the approval changes.
  slack_channel_id text,
  slack_ts text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (approval_id, round, target_key)
);

create index approval_notifications_slack on approval_notifications (approval_id)
  where slack_ts is not null;
