-- Separation of duties: a governed agent must not be able to switch governance off, by approving
-- its own calls or rewriting its own policy. Reading policies used to need no scope: every key
-- keeps that as `policies:read`. Changing them now takes `policies:manage`, which full keys get.
update api_keys set scopes = array_append(scopes, 'policies:read')
  where not ('policies:read' = any (scopes));
update api_keys set scopes = array_append(scopes, 'policies:manage')
  where access = 'full' and not ('policies:manage' = any (scopes));
-- Standard keys left with the old default scopes lose `approvals:decide`: the keys agents call
-- with must not decide approvals. Keys whose scopes were set by hand keep them.
update api_keys set scopes = array_remove(scopes, 'approvals:decide')
  where access = 'standard'
    and scopes @> array['funded_access:read', 'auth_configs:read', 'approvals:read',
                        'connect_settings:read', 'approvals:decide', 'policies:read']
    and cardinality(scopes) = 6;

-- What an approver needs to judge a held call: the policy rule that asked for approval.
alter table approvals add column policy_rule text not null default '';

-- The approvers' inbox: newest first, within an environment.
create index approvals_inbox_idx on approvals (environment_id, id desc);
