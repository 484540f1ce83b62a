-- The console's calls page filtered by an action (`/console/<env>/calls?action=…`, listAuditEvents)
-- walked the environment's events newest first and kept the matches: for an action seldom called,
-- most of the log for one page. Postgres chose a sequential scan of audit_events and a sort for it
-- (`npm run bench -- --quick --only console`: 100,000 events, 1 in 1,000 a match; the figures
-- are in infra/bench/README.md). With this index the page reads its 51 rows directly, as
-- audit_events_decision_idx serves the decision filter.
--
-- Built concurrently, so that calls keep writing their audit rows while a long log is indexed (a
-- plain build blocks inserts into audit_events until it ends). That needs the file to hold this one
-- statement: the migration then runs outside a transaction block. A build interrupted part-way
-- leaves an invalid index under this name, which `if not exists` then keeps: drop it
-- (`drop index concurrently audit_events_action_idx`) and restart a process to build it again.
create index concurrently if not exists audit_events_action_idx
  on audit_events (environment_id, action, id desc);
