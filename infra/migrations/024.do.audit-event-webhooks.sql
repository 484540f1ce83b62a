-- `audit.event` deliveries, opted into per endpoint. `audit_delivered_seq` is the seq of the last
-- event a receiver acknowledged (null while off): delivery resumes after it, whatever happened in
-- between, so an event is never skipped.
alter table webhook_endpoints
  add column audit_events boolean not null default false,
  add column audit_delivered_seq bigint;
