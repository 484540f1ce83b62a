-- Approval e-mails carry decision links (README, "Approval e-mail"): a link made for a message
-- records that it went out by e-mail, as webhook and CLI links record theirs, so the approval page
-- can refuse one that went through a relay the held call's own agent set.
alter table approval_links drop constraint approval_links_channel_check;
alter table approval_links
  add constraint approval_links_channel_check check (channel in ('webhook', 'cli', 'email'));
