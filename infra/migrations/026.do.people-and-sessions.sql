-- People: approvers and operators who sign in with the company's identity provider (OpenID
-- Connect). A person is known by the issuer and subject of their ID token; name, email and groups
-- are refreshed from the provider's claims at each sign-in. People are deployment-wide; what they
-- may do in an environment comes from their groups (role_mappings).
create table people (
  id uuid primary key,
  issuer text not null,
  subject text not null,
  email text not null,
  name text not null,
  groups text[] not null default '{}',
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz not null default now(),
  unique (issuer, subject)
);
create index people_email_idx on people (lower(email));

-- Which groups of the identity provider hold which role in an environment: `approver` decides
-- held calls, `operator` governs (policies, apps, connections), `admin` governs and maps groups to
-- roles. Deciding is the approver's alone: governing an agent and approving its calls are kept
-- apart unless a group is given both roles.
create table role_mappings (
  environment_id uuid not null references environments (id) on delete cascade,
  group_name text not null check (length(group_name) between 1 and 200),
  role text not null check (role in ('approver', 'operator', 'admin')),
  created_at timestamptz not null default now(),
  primary key (environment_id, group_name, role)
);

-- A signed-in person's session in one environment. The cookie carries a random token; only its
-- SHA-256 is kept, so a copy of this table signs nobody in. The groups and roles are those of the
-- sign-in; `csrf_secret` keys the token every state-changing form carries. A session ends at
-- whichever comes first: idle past the idle lifetime (last_seen_at), `expires_at` (absolute) or
-- sign-out (`ended_at`).
create table console_sessions (
  token_hash bytea primary key,
  id uuid not null unique,
  environment_id uuid not null references environments (id) on delete cascade,
  person_id uuid not null references people (id) on delete cascade,
  groups text[] not null,
  roles text[] not null,
  csrf_secret bytea not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz
);
create index console_sessions_person_idx on console_sessions (person_id);
create index console_sessions_expiry_idx on console_sessions (expires_at);

-- One sign-in under way: the state that comes back from the provider names it; the PKCE
-- verifier and nonce are kept sealed (AES-256-GCM, as tokens are) until the code is exchanged,
-- then the row is deleted. Rows left by abandoned sign-ins expire after ten minutes.
create table sign_in_attempts (
  state_hash bytea primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  sealed_verifier text not null,
  return_to text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);

-- The person who owns an API key (an email; null for keys nobody claimed). Separation of duties:
-- the owner of a key an agent calls with never decides that agent's held calls.
alter table api_keys add column owner text;

-- Reading the role mappings takes `people:read`, changing them `people:manage`: full keys get
-- both. Agents' keys (standard, read-only) get neither: who may decide is not theirs to see or set.
update api_keys set scopes = array_append(scopes, 'people:read')
  where access = 'full' and not ('people:read' = any (scopes));
update api_keys set scopes = array_append(scopes, 'people:manage')
  where access = 'full' and not ('people:manage' = any (scopes));
