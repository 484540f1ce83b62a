-- The OAuth clients an environment brings for apps' MCP servers (`/v1/mcp-oauth-clients`). A
-- secret, once given, is never shown again: it is sealed like every other (infra/encryption.ts,
-- bound to the row id); the hint is the last four characters, kept only for secrets long enough
-- that four give little away.
create table mcp_oauth_clients (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  app text not null,
  issuer text not null,
  client_id text not null,
  auth_method text not null check (auth_method in ('none', 'client_secret_basic', 'client_secret_post')),
  source text not null check (source = 'byo'),
  client_secret_sealed text,
  client_secret_hint text,
  status text not null default 'active' check (status in ('active', 'retired')),
  selected boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  rotated_at timestamptz,
  retired_at timestamptz,
  check ((status = 'retired') = (retired_at is not null)),
  check (not (selected and status = 'retired')),
  -- An active confidential client has a secret and a public one (`none`) has none; retiring a
  -- client erases its secret, since nothing can use a retired client again.
  check (case when status = 'retired' then client_secret_sealed is null
              else (auth_method = 'none') = (client_secret_sealed is null) end)
);

-- At most one selected client per app and environment; the select operation moves it in one
-- transaction.
create unique index mcp_oauth_clients_one_selected_per_app on mcp_oauth_clients (environment_id, app)
  where selected;

-- The same client registered twice for an app is a mistake (one of the two secrets is stale).
-- Issuer and client id may be 4096 characters each, over a btree entry's limit: hashed.
create unique index mcp_oauth_clients_one_active_registration on mcp_oauth_clients
  (environment_id, app, md5(issuer || E'\n' || client_id))
  where status = 'active';

create index mcp_oauth_clients_environment_idx on mcp_oauth_clients (environment_id, app, created_at);

-- What an environment's MCP OAuth clients say about themselves to authorization servers (the
-- RFC 7591 client metadata); nothing until first set.
create table mcp_client_branding (
  environment_id uuid primary key references environments (id) on delete cascade,
  client_name text not null,
  logo_uri text,
  client_uri text,
  policy_uri text,
  tos_uri text,
  updated_at timestamptz not null default now(),
  updated_by text not null
);
