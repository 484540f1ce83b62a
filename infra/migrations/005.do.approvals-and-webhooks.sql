-- A held call's approval: the call waits for a person to decide it, or for it to expire. The call
-- workflow that waits on it is `workflow_id`; identical calls share one pending approval, found by
-- the call's fingerprint.
create table approvals (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  fingerprint text not null,
  workflow_id text not null,
  action text not null,
  scope text not null check (scope in ('read', 'write', 'destructive')),
  agent_id text not null,
  user_external_id text not null,
  requested_from text[] not null,
  status text not null check (status in ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
  -- What the approver is asked about: the action or proxy target and the input, never a token.
  request jsonb not null,
  policy_id text not null,
  policy_version integer not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  decided_by text,
  decided_at timestamptz,
  -- When the approved call ran; an approval lets exactly one call through.
  consumed_at timestamptz
);

create unique index approvals_one_pending_per_call on approvals (environment_id, fingerprint)
  where status = 'pending';
create index approvals_user_idx on approvals (environment_id, user_external_id) where status = 'pending';

-- Where an environment's webhooks go (`approval.decided`), with the Standard Webhooks signing
-- secret sealed like every other secret.
create table webhook_endpoints (
  environment_id uuid primary key references environments (id) on delete cascade,
  url text not null,
  secret_sealed text not null,
  updated_at timestamptz not null default now(),
  updated_by text not null
);

create index audit_events_decision_idx on audit_events (environment_id, decision, id desc);
