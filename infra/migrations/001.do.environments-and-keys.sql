-- Tenancy: a project has environments; every other record belongs to exactly one of them.
create table environments (
  id uuid primary key,
  name text not null unique check (name ~ '^[a-z][a-z0-9-]{0,39}$'),
  created_at timestamptz not null default now()
);

-- API keys are shown once; only a SHA-256 of the whole key is kept (keys are 192-bit random, so a
-- slow password hash buys nothing). `prefix` is the non-secret start shown in listings.
create table api_keys (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  name text not null,
  prefix text not null,
  secret_hash bytea not null unique,
  access text not null check (access in ('read_only', 'standard', 'full')),
  scopes text[] not null,
  agent_id text not null,
  audience text not null check (audience in ('backend', 'business')),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

create index api_keys_environment_idx on api_keys (environment_id);

-- Funded access: whether the operator's own OAuth clients may stand in for an environment that
-- has no auth config for an app. With neither, a connect link for that app cannot be made.
create table funded_access (
  environment_id uuid primary key references environments (id) on delete cascade,
  enabled boolean not null,
  updated_at timestamptz not null default now(),
  updated_by text not null
);
