-- Every governed call looks up the approval its workflow holds by fingerprint, in any state that
-- still holds identical calls (pending, approved and unused, rejected), to reach the workflow id
-- that approval stored. The unique index covers pending approvals only.
create index approvals_call_idx on approvals (environment_id, fingerprint);
