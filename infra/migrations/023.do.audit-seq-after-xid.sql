-- An export stops at the newest seq visible when it starts, after waiting for the transactions open
-- then (activities/audit/export-ndjson.ts). That covers every lower seq only if a writer has its
-- transaction id before it draws a seq; a column default is evaluated before the row gets one, so
-- the seq is drawn here, after pg_current_xact_id() assigns it. A row inserted with an explicit seq
-- keeps it.
alter table audit_events alter column seq drop default;

create or replace function audit_event_hash() returns trigger language plpgsql as $$
begin
  if new.seq is null then
    perform pg_current_xact_id();
    new.seq := nextval('audit_events_seq_seq');
  end if;
  new.hash := sha256(convert_to(audit_event_canonical(new.id, new.environment_id, new.time,
    new.action, new.scope, new.decision, new.reason, new.agent_id, new.via, new.user_external_id,
    new.connected_user_id, new.connection_id, new.approval_id, new.request, new.response,
    new.trace_id, new.policy_id, new.policy_version, new.grant_id), 'UTF8'));
  return new;
end;
$$;
