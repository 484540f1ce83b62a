-- Refused calls are audited too: a run of an unknown action has no scope, and a call refused for a
-- missing or invalid user names none. Every other column a refusal fills as usual.
alter table audit_events alter column scope drop not null;
alter table audit_events alter column user_external_id drop not null;
