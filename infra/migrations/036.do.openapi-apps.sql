-- REST APIs imported from their OpenAPI documents as apps of an environment, beside the catalog
-- and the remote MCP servers. `id` is the app id (`<app>.<operation>` actions, `<app>__<operation>`
-- tools of Gatehouse's own MCP server); it never names a catalog app or an MCP app of the
-- environment, nor does an MCP app take one of these ids (checked where apps are registered).
create table openapi_apps (
  environment_id uuid not null references environments (id) on delete cascade,
  id text not null,
  name text not null,
  -- Where every call goes: the operator's override, else the document's server as imported.
  -- Pinned: a refresh never moves it (only an operator's update does).
  base_url text not null,
  -- The operator's override, when given (kept so a refresh imports with it).
  base_url_override text,
  -- Where the document was fetched from (refresh fetches it again); null when it was given inline.
  document_url text,
  -- Only these operations become actions, when set.
  operation_allowlist text[],
  -- Operation name → `read`, `write` or `destructive`, over the document's grade.
  grade_overrides jsonb not null default '{}',
  -- The operator trusts the document's own `x-gatehouse-scope` grades.
  trust_document_grades boolean not null default false,
  -- The snapshot an operator accepted: operations are trusted as of it (null: none yet).
  accepted_version integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  updated_by text not null,
  primary key (environment_id, id)
);

-- Each import of the document that differed from the newest: versions count up per app. Calls
-- build their request from the accepted version's descriptors only.
create table openapi_app_snapshots (
  environment_id uuid not null,
  app_id text not null,
  version integer not null,
  -- The canonical operation set (snapshotOf): what pinning compares.
  operations jsonb not null,
  -- sha256 of the canonical operations, base64url: equal digests, equal operation sets.
  digest text not null,
  -- The importer's descriptors: what a call builds its request from.
  descriptors jsonb not null,
  -- {specification, title, version, base_url, skipped, collisions, auth, unmatched} as imported.
  import jsonb not null,
  document_url text,
  fetched_at timestamptz not null default now(),
  fetched_by text not null,
  accepted_at timestamptz,
  accepted_by text,
  primary key (environment_id, app_id, version),
  foreign key (environment_id, app_id) references openapi_apps (environment_id, id) on delete cascade
);
