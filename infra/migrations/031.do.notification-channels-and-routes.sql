-- Approval notifications: when a call is held, the people asked are told where they already work
-- (e-mail, Slack, Microsoft Teams). This migration holds what the senders read: the channels an
-- environment has set up, the routes saying who is told through which channel, and the people
-- who asked not to be told by one. Sending is the call workflow's; nothing here sends.

-- One channel per environment and kind. `email` is an SMTP relay; `slack` a Slack app (its bot
-- token posts and looks people up by e-mail, its signing secret checks what Slack sends back);
-- `teams` has nothing global (each route carries its own workflow webhook), so its row only says
-- Teams is in use: routes of a kind whose channel is not set deliver nothing. Secrets are sealed
-- with the key ring (AES-256-GCM, associated data naming the environment, kind and field, so a
-- value copied to another row or field does not open) and never returned: answers say whether one
-- is set. One table with a column per setting rather than a JSON blob, so each kind's required
-- settings are checked here whatever code writes them.
create table notification_channels (
  environment_id uuid not null references environments (id) on delete cascade,
  kind text not null check (kind in ('email', 'slack', 'teams')),
  smtp_host text,
  smtp_port integer check (smtp_port between 1 and 65535),
  -- `none` is plain SMTP: accepted only for a relay on loopback or (with NOTIFY_ALLOW_PRIVATE)
  -- the private network, since the password and the approval links would cross the wire in clear.
  smtp_security text check (smtp_security in ('starttls', 'tls', 'none')),
  smtp_username text,
  smtp_password_sealed text,
  sender_address text,
  sender_name text,
  slack_bot_token_sealed text,
  slack_signing_secret_sealed text,
  -- Slack's Web API, `https://slack.com/api/` unless NOTIFY_ALLOW_PRIVATE let a stand-in be named
  -- (tests): a token is sent to it, so it is never chosen freely in production.
  slack_api_base_url text,
  updated_at timestamptz not null default now(),
  -- The agent id of the key that set it, or `cli`.
  updated_by text not null,
  -- The agent of the API key that set it, null when the CLI did: a relay or Slack app a key chose
  -- carries decision links, which must never decide that key's agent's own calls (as for webhook
  -- endpoints, see approval_links' provenance).
  key_agent_id text,
  primary key (environment_id, kind),
  constraint notification_channels_email_check check (
    kind <> 'email' or (smtp_host is not null and smtp_port is not null
      and smtp_security is not null and sender_address is not null
      -- A password without a user name could not be sent.
      and (smtp_password_sealed is null or smtp_username is not null))),
  constraint notification_channels_slack_check check (
    kind <> 'slack' or (slack_bot_token_sealed is not null
      and slack_signing_secret_sealed is not null and slack_api_base_url is not null)),
  -- Each kind keeps only its own settings, so a kind changed by hand cannot leave another's
  -- secrets behind.
  constraint notification_channels_fields_check check (
    (kind = 'email' or (smtp_host is null and smtp_port is null and smtp_security is null
      and smtp_username is null and smtp_password_sealed is null and sender_address is null
      and sender_name is null))
    and (kind = 'slack' or (slack_bot_token_sealed is null
      and slack_signing_secret_sealed is null and slack_api_base_url is null)))
);

-- Who is told through which channel. `audience` is what a policy's `requested_from` names:
-- `group:<name>` (a group of the identity provider), `person:<email>` (lower-cased, as deciders
-- are compared), or `*` for every entry asked. Routes add up: an approval asking a group reaches
-- it through every route of that group and every `*` route. `target` says where:
--   each_person    email: each person's own address; slack: a direct message to each person,
--                  found by their e-mail (value null)
--   address        email: one fixed address, such as a group mailbox (value: the address)
--   slack_channel  slack: a post in one channel (value: its id, `C…`)
--   webhook        teams: a post through a Teams workflow webhook (value: its host, for showing;
--                  the URL carries the signature that authorises posting, so it is sealed in
--                  webhook_url_sealed and never returned)
-- `destination` is the target in one comparable form (each_person, an address lower-cased, a
-- channel id, `sha256:<hex>` of a webhook URL): a route is unique per audience, kind and
-- destination, and the senders send one message per destination.
create table notification_routes (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  audience text not null check (audience = '*' or (length(audience) between 7 and 220
    and (audience like 'group:_%' or audience like 'person:_%@_%'))),
  kind text not null check (kind in ('email', 'slack', 'teams')),
  target text not null check (target in ('each_person', 'address', 'slack_channel', 'webhook')),
  value text,
  webhook_url_sealed text,
  destination text not null,
  -- Who set it last (a key's agent id, or `cli`), and, as for channels, the agent of the key that
  -- chose this destination, null for the CLI.
  updated_at timestamptz not null default now(),
  updated_by text not null,
  key_agent_id text,
  unique (environment_id, audience, kind, destination),
  constraint notification_routes_kind_target_check check (
    (kind = 'email' and target in ('each_person', 'address'))
    or (kind = 'slack' and target in ('each_person', 'slack_channel'))
    or (kind = 'teams' and target = 'webhook')),
  constraint notification_routes_value_check check (
    (target = 'each_person') = (value is null)
    and (target = 'webhook') = (webhook_url_sealed is not null))
);
create index notification_routes_environment_idx on notification_routes (environment_id, audience);

-- A person who asked not to be told through a kind of channel in an environment (their e-mail,
-- lower-cased). It stops what is addressed to them alone (e-mails to their address, Slack direct
-- messages); posts in shared places (a Slack or Teams channel, a group mailbox) reach others too
-- and go on. Set by the person in the console or by an operator.
create table notification_opt_outs (
  environment_id uuid not null references environments (id) on delete cascade,
  email text not null check (email = lower(email) and length(email) between 3 and 320),
  kind text not null check (kind in ('email', 'slack', 'teams')),
  created_at timestamptz not null default now(),
  created_by text not null,
  primary key (environment_id, email, kind)
);

-- Reading the channels, routes and opt-outs takes `notifications:read`, changing them
-- `notifications:manage`: full keys get both. Agents' keys get neither: where approvers are told
-- about an agent's held calls, and who asked not to be, is not the agent's to see or change.
update api_keys set scopes = array_append(scopes, 'notifications:read')
  where access = 'full' and not ('notifications:read' = any (scopes));
update api_keys set scopes = array_append(scopes, 'notifications:manage')
  where access = 'full' and not ('notifications:manage' = any (scopes));
