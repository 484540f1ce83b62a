-- End users of a customer's product, known by the caller's own id (`external_id`).
create table connected_users (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  external_id text not null,
  customer text,
  created_at timestamptz not null default now(),
  unique (environment_id, external_id)
);

-- A user's authorisation of one app. Tokens are sealed (infra/encryption.ts) and bound to the
-- connection id; `auth_config_id` null means the operator's platform client (funded access).
create table connections (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  connected_user_id uuid not null references connected_users (id) on delete cascade,
  app text not null,
  status text not null check (status in ('active', 'expired', 'revoked')),
  auth_kind text not null default 'oauth2',
  auth_config_id uuid references auth_configs (id),
  granted_scopes text[] not null default '{}',
  provider_scopes text[] not null default '{}',
  access_token_sealed text,
  refresh_token_sealed text,
  access_token_expires_at timestamptz,
  last_refreshed_at timestamptz,
  refresh_count integer not null default 0,
  last_used_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  revoked_at timestamptz
);

-- One live connection per user and app: connecting again re-authorises it.
create unique index connections_live_per_app on connections (connected_user_id, app) where status <> 'revoked';
create index connections_environment_idx on connections (environment_id);

-- Connect and reconnect links. The token in the URL is kept as a hash for lookup and sealed so
-- the one active reconnect link of a connection can be handed out again.
create table connect_links (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  connected_user_id uuid not null references connected_users (id) on delete cascade,
  app text not null,
  purpose text not null check (purpose in ('connect', 'reconnect')),
  connection_id uuid references connections (id) on delete cascade,
  token_hash bytea not null unique,
  token_sealed text not null,
  redirect_url text,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);

create index connect_links_connection_idx on connect_links (connection_id) where used_at is null;

-- One trip to the app's authorize page: state and PKCE verifier for the callback to check.
-- The callback's parameters (with the authorization code) are parked here, sealed, for the
-- activity that exchanges them: the workflow that runs it carries only the attempt id.
create table oauth_attempts (
  id uuid primary key,
  link_id uuid not null references connect_links (id) on delete cascade,
  state_hash bytea not null unique,
  code_verifier_sealed text not null,
  callback_params_sealed text,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  created_at timestamptz not null default now()
);

-- Branding of the hosted connect pages, per environment (defaults apply until set).
create table connect_settings (
  environment_id uuid primary key references environments (id) on delete cascade,
  display_name text not null,
  accent_color text not null,
  logo_url text,
  support_url text,
  theme jsonb not null,
  updated_at timestamptz not null default now(),
  updated_by text not null
);

-- Every call through actions or the proxy, as the audit endpoints list it. Never updated or
-- deleted by the API; deleting a user keeps its history (no foreign key to connected_users).
create table audit_events (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  time timestamptz not null default now(),
  action text not null,
  scope text not null,
  decision text not null check (decision in ('allowed', 'blocked', 'denied', 'failed')),
  reason text,
  agent_id text not null,
  via text not null,
  user_external_id text not null,
  connected_user_id uuid,
  connection_id uuid,
  approval_id uuid,
  request jsonb not null,
  response jsonb,
  trace_id text not null,
  policy_id text,
  policy_version integer
);

create index audit_events_user_time_idx on audit_events (environment_id, user_external_id, time desc);
create index audit_events_environment_idx on audit_events (environment_id, id desc);
