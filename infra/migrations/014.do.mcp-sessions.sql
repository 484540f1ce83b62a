-- MCP sessions: an address a backend mints for one of its users, handed to an agent's MCP client.
-- The address carries a secret; only its sha256 is kept. The session acts as the agent of the key
-- that minted it, and only while that key is live.
create table mcp_sessions (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  key_id uuid not null references api_keys (id) on delete cascade,
  agent_id text not null,
  user_external_id text not null,
  -- null: no filter. Apps are catalog ids, actions `<app>.<action>`.
  apps text[],
  actions text[],
  -- Whether a held call's result may carry the hosted approval page's link: the minting backend
  -- says so when the person at this MCP client may also decide the agent's calls.
  show_approval_links boolean not null default false,
  -- Whether apps the user has not connected are listed too, so that calling one offers a
  -- connect link.
  include_unconnected_apps boolean not null default false,
  secret_hash bytea not null unique,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);

create index mcp_sessions_environment_idx on mcp_sessions (environment_id);
