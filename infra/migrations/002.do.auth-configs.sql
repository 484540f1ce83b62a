-- An environment's OAuth client for an app ("auth config"). The secret is sealed with AES-256-GCM
-- (infra/encryption.ts); only the last four characters are kept in clear, as a hint.
create table auth_configs (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  app text not null,
  name text not null,
  client_id text not null,
  client_secret_sealed text not null,
  client_secret_hint text not null,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  disabled_at timestamptz
);

create index auth_configs_environment_app_idx on auth_configs (environment_id, app, created_at desc);
