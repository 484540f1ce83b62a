-- The workflow run that answered a request. A request whose answer was lost on its way back may
-- reach Temporal again with the same id after that run closed, and land in a newer run of the same
-- call: the newer run finds the request's row here, answers nothing itself, and the API reads the
-- answer the earlier run gave. Null for rows the API writes itself.
alter table audit_events add column workflow_run_id text;

-- A governed call's final answer per (environment, agent, Idempotency-Key), replayed to a retry
-- with the same key and the same call for 24 hours; the same key with another call is refused.
-- `fingerprint` is the call's identity (api/calls/fingerprint.ts), the key included. `answer` is
-- the sealed CallAnswer (it may hold the app's data); null while the call has none.
create table call_idempotency_keys (
  environment_id uuid not null references environments (id) on delete cascade,
  agent_id text not null,
  key text not null,
  fingerprint text not null,
  answer text,
  decision text check (decision in ('allowed', 'blocked', 'denied', 'failed')),
  audit_event_id uuid,
  created_at timestamptz not null default now(),
  answered_at timestamptz,
  expires_at timestamptz not null,
  primary key (environment_id, agent_id, key)
);

create index call_idempotency_keys_expiry_idx on call_idempotency_keys (expires_at);
