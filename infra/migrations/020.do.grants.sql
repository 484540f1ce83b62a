-- Grants with an end. A person approving a held call may also allow the same action (at the same
-- scope) of the same agent, for that user or any user, until `expires_at`. A grant only turns `ask`
-- into `allow`. It is made by the approval that carried it (one at most), never deleted: revoking
-- stamps `revoked_at`, so audit rows naming it keep meaning something.
create table grants (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  agent_id text not null,
  action text not null,
  scope text not null check (scope in ('read', 'write', 'destructive')),
  -- null: for any user.
  user_external_id text,
  approval_id uuid not null references approvals (id) on delete cascade,
  created_by text not null,
  -- The workflow's clock at the decision, and that plus the granted seconds: calls are judged by
  -- the workflow's clock too, so a grant ends exactly there, however the hosts' clocks drift.
  created_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_by text,
  check (expires_at > created_at),
  check ((revoked_at is null) = (revoked_by is null))
);

create unique index grants_one_per_approval on grants (approval_id);
-- The lookup every call makes (activities/calls/prepare-call.ts): live grants of the agent for
-- the action, for the user or any user.
create index grants_live_idx on grants (environment_id, agent_id, action, expires_at desc)
  where revoked_at is null;
-- GET /v1/grants: newest first, by id (UUIDv7).
create index grants_list_idx on grants (environment_id, id desc);

-- Every call a grant let through names it.
alter table audit_events add column grant_id uuid;

-- Reading grants takes `grants:read`, revoking them `grants:manage`: full keys get both, as
-- migration 018 did for `apps:manage`. Standard and read-only keys get neither: those are the
-- keys agents call with, and an agent is not to see its grants (nor can it make or extend one).
update api_keys set scopes = array_append(scopes, 'grants:read')
  where access = 'full' and not ('grants:read' = any (scopes));
update api_keys set scopes = array_append(scopes, 'grants:manage')
  where access = 'full' and not ('grants:manage' = any (scopes));
