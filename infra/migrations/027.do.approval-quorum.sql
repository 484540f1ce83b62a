-- Two-person rules. A policy may ask that a held call be approved by several different deciders
-- before it runs: `quorum` is that number, copied from the policy when the call is held, so a later
-- policy change does not move the bar under an approval already being decided. Approvals held
-- before needed one decision.
alter table approvals add column quorum integer not null default 1
  check (quorum between 1 and 10);

-- The owners (emails) of the held agent's live API keys when the call was held: whoever owns a
-- key an agent calls with must not approve that agent's calls, and the workflow, which refuses
-- such a decider, may not read Postgres while it judges a decision.
alter table approvals add column agent_key_owners text[] not null default '{}';

-- Every decision on an approval, kept as it arrives, so an approval that needs several shows who
-- has approved so far and who settled it, and audit can name them all. `identity` is whom the
-- decision counts as (a key's agent id, `person:<email>` lower-cased, a link's addressee): one
-- identity decides an approval once. `id` is made by the workflow, so a decision written again by
-- a retried activity is recognised as the same one. A person's issuer and subject say who they
-- were at the identity provider, whatever their email says later.
create table approval_decisions (
  id uuid primary key,
  approval_id uuid not null references approvals (id) on delete cascade,
  seq integer not null,
  identity text not null,
  label text not null,
  kind text not null check (kind in ('key', 'person', 'link')),
  issuer text,
  subject text,
  name text,
  email text,
  via text not null check (via in ('api', 'console', 'link')),
  decision text not null check (decision in ('approve', 'reject')),
  -- The grant this decision asked for with its approval; one is made only when every approving
  -- decision asked for one.
  grant_request jsonb,
  decided_at timestamptz not null default now(),
  unique (approval_id, seq),
  unique (approval_id, identity)
);
