-- Connections of kind `credential`: a secret the end user typed on the hosted connect page (an
-- API key, a bearer token, or a username and password) instead of an OAuth grant. The scheme and,
-- for an API key, where it goes are copied from the app's declaration when the user connects, so a
-- connection is always used the way it was entered; the secret itself is sealed like the tokens
-- (infra/encryption.ts, bound to the connection id) and erased when the connection is revoked.
alter table connections
  add constraint connections_auth_kind check (auth_kind in ('oauth2', 'credential'));
alter table connections add column credential_scheme text
  check (credential_scheme in ('api_key', 'bearer', 'basic'));
alter table connections add column credential_in text check (credential_in in ('header', 'query'));
alter table connections add column credential_name text;
alter table connections add column credential_sealed text;
alter table connections add constraint connections_credential_shape check (
  (auth_kind = 'credential') = (credential_scheme is not null)
  and (coalesce(credential_scheme, '') = 'api_key') = (credential_in is not null)
  and (credential_in is null) = (credential_name is null)
);

-- Apps whose users connect with a credential they enter, per environment: what the hosted page
-- asks for and how a call presents it. Written by whoever registers such an app (the OpenAPI
-- registry, for an imported document whose scheme is an API key, HTTP bearer or HTTP basic);
-- `declared_by` says who, so each registry removes only its own. An id never names a catalog app
-- or a remote MCP app of the environment (checked where a declaration is saved).
create table credential_app_schemes (
  environment_id uuid not null references environments (id) on delete cascade,
  app_id text not null,
  name text not null,
  scheme text not null check (scheme in ('api_key', 'bearer', 'basic')),
  key_in text check (key_in in ('header', 'query')),
  key_name text,
  -- Shown on the page under the field: where the user finds the credential, what it is for.
  hint text,
  declared_by text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (environment_id, app_id),
  check ((scheme = 'api_key') = (key_in is not null)),
  check ((key_in is null) = (key_name is null))
);
