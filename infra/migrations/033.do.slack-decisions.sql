-- Decisions made with the buttons of an approval's Slack message: a person, known to Gatehouse by
-- the e-mail Slack confirmed for them, deciding through Slack (`via` slack), recorded as that
-- person as a decision in the console is.
alter table approval_decisions drop constraint approval_decisions_via_check;
alter table approval_decisions add constraint approval_decisions_via_check
  check (via in ('api', 'console', 'link', 'slack'));
