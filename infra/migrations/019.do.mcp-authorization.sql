-- How Gatehouse identifies itself to the authorization server of a remote MCP app, and what each
-- connect attempt and connection to such an app was authorised with.

-- Dynamic client registrations (RFC 7591) Gatehouse made: at most one current per environment,
-- issuer and redirect URI, reused by every connect to that authorization server. The answer
-- (client secret included) is sealed, bound to the row id. `metadata_sha256` is of the client
-- metadata sent (the environment's MCP client branding), so a branding change registers anew at
-- the next connect. A registration no longer current stays: connections made with it go on
-- refreshing with it. `refused`: the authorization server answered `invalid_client` to it.
create table mcp_client_registrations (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  issuer text not null,
  redirect_uri text not null,
  client_id text not null,
  registration_sealed text not null,
  metadata_sha256 text not null,
  status text not null default 'current' check (status in ('current', 'replaced', 'refused')),
  created_at timestamptz not null default now(),
  ended_at timestamptz,
  check ((status = 'current') = (ended_at is null))
);

-- Issuer and redirect URI may be long: hashed, as migration 006 does for MCP OAuth clients.
create unique index mcp_client_registrations_one_current on mcp_client_registrations
  (environment_id, md5(issuer || E'\n' || redirect_uri)) where status = 'current';

-- Which client an MCP app's connect attempt presented (`byo`: an MCP OAuth client of the
-- environment; `cimd`: Gatehouse's client ID metadata document, `client_id` its URL; `dcr`: a
-- registration above), and the authorization server, resource indicator, scope and discovered
-- metadata its code is exchanged with: the exchange talks to the server the code came from.
create table mcp_oauth_attempts (
  attempt_id uuid primary key references oauth_attempts (id) on delete cascade,
  client_kind text not null check (client_kind in ('byo', 'cimd', 'dcr')),
  mcp_oauth_client_id uuid references mcp_oauth_clients (id),
  registration_id uuid references mcp_client_registrations (id),
  client_id text not null,
  server_url text not null,
  issuer text not null,
  resource text,
  scope text,
  discovery jsonb not null,
  check ((client_kind = 'byo') = (mcp_oauth_client_id is not null)),
  check ((client_kind = 'dcr') = (registration_id is not null))
);

-- The same for a connection to an MCP app: the client that made it (a connection remembers it,
-- and refreshes with it: a BYO client's current secret, a registration's own), where its tokens
-- are good, and `step_up_scope`, a wider scope the server asked for since (RFC 6750
-- `insufficient_scope`), which the connection's next reconnect asks for.
create table mcp_connection_auth (
  connection_id uuid primary key references connections (id) on delete cascade,
  client_kind text not null check (client_kind in ('byo', 'cimd', 'dcr')),
  mcp_oauth_client_id uuid references mcp_oauth_clients (id),
  registration_id uuid references mcp_client_registrations (id),
  client_id text not null,
  server_url text not null,
  issuer text not null,
  resource text,
  scope text,
  discovery jsonb not null,
  step_up_scope text,
  updated_at timestamptz not null default now(),
  check ((client_kind = 'byo') = (mcp_oauth_client_id is not null)),
  check ((client_kind = 'dcr') = (registration_id is not null))
);

create index mcp_connection_auth_client_idx on mcp_connection_auth (mcp_oauth_client_id)
  where mcp_oauth_client_id is not null;
