-- Signed decision links: approvers are people, reached through the `approval.requested` webhook,
-- which carries one link per approver asked, so a chat or e-mail integration only forwards links. A
-- link names its approver, who becomes `decided_by`, and is valid until its approval expires. Only
-- the sha256 of the token is kept: the token itself is derived again (HMAC of the approval id and
-- the approver under a key derived from ENCRYPTION_KEY) whenever a webhook delivery needs it, so a
-- retried delivery carries the same links and an inserted row is never replaced.
create table approval_links (
  token_hash bytea primary key,
  approval_id uuid not null references approvals (id) on delete cascade,
  environment_id uuid not null references environments (id) on delete cascade,
  -- A decider named in the approval's requested_from, or `approval-link` for the generic link.
  approver text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  -- When a decision was made through this link.
  used_at timestamptz
);

create index approval_links_approval_idx on approval_links (approval_id);
