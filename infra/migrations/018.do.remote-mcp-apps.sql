-- Remote MCP servers registered as apps of an environment, beside the compiled catalog. `id` is the
-- app id (`<app>.<tool>` actions, `<app>__<tool>` tools of Gatehouse's own MCP server); it never
-- names a catalog app (checked where apps are registered). `auth` is what discovery found: `oauth`
-- when the server asks for authorization (users then connect through the hosted connect flow),
-- `none` when it answers without (calls then need no connection).
create table mcp_apps (
  environment_id uuid not null references environments (id) on delete cascade,
  id text not null,
  name text not null,
  server_url text not null,
  auth text not null check (auth in ('none', 'oauth')),
  -- Only these tools become actions, when set.
  tool_allowlist text[],
  -- Tool name → `read`, `write` or `destructive`, over the grade the tool's annotations give.
  grade_overrides jsonb not null default '{}',
  -- The snapshot an operator accepted: tools are trusted as of it (null: none yet).
  accepted_version integer,
  -- When `tools/list` last answered (registration or refresh), whether or not it made a version.
  tools_checked_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  updated_by text not null,
  primary key (environment_id, id)
);

-- What `tools/list` answered, each time it was read: versions count up per app. A version is
-- accepted when an operator says so; calls use the tools of the accepted one only.
create table mcp_app_snapshots (
  environment_id uuid not null,
  app_id text not null,
  version integer not null,
  -- [{name, title, description, inputSchema, annotations}], as the server listed them.
  tools jsonb not null,
  fetched_at timestamptz not null default now(),
  fetched_by text not null,
  accepted_at timestamptz,
  accepted_by text,
  primary key (environment_id, app_id, version),
  foreign key (environment_id, app_id) references mcp_apps (environment_id, id) on delete cascade
);

-- Registering, refreshing and accepting take `apps:manage`; reading the registry `apps:read`.
-- Keys made before them: every key that could read the catalog (`auth_configs:read`, which
-- `GET /v1/apps` takes) reads the registry too, and full keys manage it, as migration 017 did
-- for `mcp_sessions:manage`.
update api_keys set scopes = array_append(scopes, 'apps:read')
  where 'auth_configs:read' = any (scopes) and not ('apps:read' = any (scopes));
update api_keys set scopes = array_append(scopes, 'apps:manage')
  where access = 'full' and not ('apps:manage' = any (scopes));
