-- A tamper-evident audit log: activities/audit/README.md says how rows are hashed, sealed into
-- signed checkpoints and verified.
--
-- `seq` orders rows by insertion (a UUIDv7 id orders them by the time the id was made, and a row
-- may be written late): a checkpoint seals an environment's rows with seq in (after_seq, last_seq],
-- so a late row goes to the next checkpoint and a row slipped into a sealed range is seen.
alter table audit_events add column seq bigserial;
create unique index audit_events_seq_idx on audit_events (environment_id, seq);

-- The canonical form of an event, hashed into `hash`. A JSON array of strings and nulls, in this
-- order; `verify` (activities/audit/canonical-event.ts) rebuilds it in TypeScript and both must
-- agree byte for byte. request and response enter as Postgres's own jsonb text rendering.
create function audit_event_canonical(
  id uuid, environment_id uuid, at timestamptz, action text, scope text, decision text,
  reason text, agent_id text, via text, user_external_id text, connected_user_id uuid,
  connection_id uuid, approval_id uuid, request jsonb, response jsonb, trace_id text,
  policy_id text, policy_version integer, grant_id uuid
) returns text language sql stable as $$
  select '["gatehouse.audit.v1",' || array_to_string(array[
    to_json(id::text)::text, to_json(environment_id::text)::text,
    to_json(to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
    to_json(action)::text, to_json(scope)::text, to_json(decision)::text, to_json(reason)::text,
    to_json(agent_id)::text, to_json(via)::text, to_json(user_external_id)::text,
    to_json(connected_user_id::text)::text, to_json(connection_id::text)::text,
    to_json(approval_id::text)::text, to_json(request::text)::text, to_json(response::text)::text,
    to_json(trace_id)::text, to_json(policy_id)::text, to_json(policy_version::text)::text,
    to_json(grant_id::text)::text
  ], ',', 'null') || ']'
$$;

-- Computed in the inserting statement itself, whoever writes the row (the call activities, the
-- joined-request copy, refused calls), so the write path stays one statement. Only on insert: a
-- row edited behind the service's back keeps its old hash, and `verify` names it. The one
-- legitimate rewrite (activities/db/audit-events.ts: a row no caller was answered with, written
-- over by the run that answered) sets hash = excluded.hash.
create function audit_event_hash() returns trigger language plpgsql as $$
begin
  new.hash := sha256(convert_to(audit_event_canonical(new.id, new.environment_id, new.time,
    new.action, new.scope, new.decision, new.reason, new.agent_id, new.via, new.user_external_id,
    new.connected_user_id, new.connection_id, new.approval_id, new.request, new.response,
    new.trace_id, new.policy_id, new.policy_version, new.grant_id), 'UTF8'));
  return new;
end;
$$;

alter table audit_events add column hash bytea;
update audit_events set hash = sha256(convert_to(audit_event_canonical(id, environment_id, time,
  action, scope, decision, reason, agent_id, via, user_external_id, connected_user_id,
  connection_id, approval_id, request, response, trace_id, policy_id, policy_version, grant_id),
  'UTF8'));
alter table audit_events alter column hash set not null;

create trigger audit_events_hash before insert on audit_events
  for each row execute function audit_event_hash();

-- The public half of every key that signed a checkpoint; rotation adds a row under a new id.
-- Written by the sealing activity; `verify --public-keys` trusts a file instead of this table.
create table audit_signing_keys (
  id text primary key,
  public_key text not null,
  created_at timestamptz not null default now()
);

-- One seal of an environment's events: the rows with seq in (after_seq, last_seq], in seq order,
-- their ids and hashes (so `verify` can name a missing or added row), the Merkle root over them,
-- chained to the previous checkpoint's hash and signed (Ed25519) over its canonical form.
create table audit_checkpoints (
  id uuid primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  after_seq bigint not null,
  last_seq bigint not null,
  event_count integer not null,
  event_ids uuid[] not null,
  -- Their hashes, 32 bytes each, concatenated in the same order.
  event_hashes bytea not null,
  merkle_root bytea not null,
  previous_hash bytea,
  hash bytea not null,
  key_id text not null,
  signature bytea not null,
  sealed_at timestamptz not null,
  unique (environment_id, last_seq)
);
