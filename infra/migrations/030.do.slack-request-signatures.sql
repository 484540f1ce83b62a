-- Signatures of the Slack requests Gatehouse accepted (button presses on approval messages), so a
-- copy of one sent again is refused. Slack signs each request over its timestamp and body and
-- Gatehouse refuses a timestamp more than five minutes from its clock; within those five minutes
-- only a record of what was accepted tells a copy from the original, and it must be shared by
-- every API process. A row is needed until its request's timestamp leaves the window
-- (`keep_until`), and is deleted by a later claim.
create table slack_request_signatures (
  signature text primary key,
  keep_until timestamptz not null
);

create index slack_request_signatures_keep_until on slack_request_signatures (keep_until);
