-- Policies govern agents: they decide whether an agent's call is allowed, held for a person's
-- approval or denied. The live version is in `policies`; every version ever written, the live one
-- included, is kept in `policy_versions` so audit can name the one that decided.
create table policies (
  environment_id uuid not null references environments (id) on delete cascade,
  id text not null check (id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name text not null,
  agents text[] not null,
  version integer not null,
  defaults jsonb not null,
  rules jsonb not null,
  approval jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  updated_by text not null,
  primary key (environment_id, id)
);

create table policy_versions (
  environment_id uuid not null,
  policy_id text not null,
  version integer not null,
  name text not null,
  agents text[] not null,
  defaults jsonb not null,
  rules jsonb not null,
  approval jsonb not null,
  created_at timestamptz not null default now(),
  created_by text not null,
  primary key (environment_id, policy_id, version),
  foreign key (environment_id, policy_id) references policies (environment_id, id) on delete cascade
);

-- Every environment starts with `default`, for all agents: read allow, write ask, destructive deny.
insert into policies (environment_id, id, name, agents, version, defaults, rules, approval, updated_by)
select id, 'default', 'Default', array['*'], 1,
       '{"read":"allow","write":"ask","destructive":"deny"}', '[]',
       '{"requested_from":[],"ttl_seconds":86400}', 'gatehouse'
from environments;

insert into policy_versions (environment_id, policy_id, version, name, agents, defaults, rules, approval, created_by)
select environment_id, id, version, name, agents, defaults, rules, approval, updated_by from policies;

-- New environments get the same `default` policy, whichever code path creates them.
create function seed_default_policy() returns trigger language plpgsql as $$
begin
  insert into policies (environment_id, id, name, agents, version, defaults, rules, approval, updated_by)
  values (new.id, 'default', 'Default', array['*'], 1,
          '{"read":"allow","write":"ask","destructive":"deny"}', '[]',
          '{"requested_from":[],"ttl_seconds":86400}', 'gatehouse');
  insert into policy_versions (environment_id, policy_id, version, name, agents, defaults, rules, approval, created_by)
  values (new.id, 'default', 1, 'Default', array['*'],
          '{"read":"allow","write":"ask","destructive":"deny"}', '[]',
          '{"requested_from":[],"ttl_seconds":86400}', 'gatehouse');
  return new;
end;
$$;

create trigger environments_seed_default_policy after insert on environments
  for each row execute function seed_default_policy();
