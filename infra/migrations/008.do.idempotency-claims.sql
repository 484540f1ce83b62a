-- Each claim of an Idempotency-Key gets its own id. A request that outlived the 5 minutes after
-- which its claim is taken over may still finish: its answer and its release then touch nothing,
-- since they name a claim that is no longer there.
alter table idempotency_keys add column claim_id uuid;
