-- Idempotency-Key on POSTs: the first response is kept for 24 hours with a hash of the request, so
-- a retry is answered the same and a different request under the key is refused. In Postgres, so
-- every API instance sees the same keys.
create table idempotency_keys (
  environment_id uuid not null references environments (id) on delete cascade,
  key text not null,
  request_hash text not null,
  state text not null check (state in ('in_flight', 'done')),
  response_status integer,
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (environment_id, key)
);

create index idempotency_keys_expiry_idx on idempotency_keys (expires_at);
