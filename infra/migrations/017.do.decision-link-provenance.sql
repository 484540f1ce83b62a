-- Decision links belong to people: a link never reaches the agent whose call it decides (README,
-- "Decision links and the hosted approval page"). Each link records the channel it went out through
-- and, when an API key chose where it went, that key's agent: the approval page refuses a decision
-- through a link that went through the held call's own agent. Rows stored before this migration
-- record neither (channel null): they were made for the `approval.requested` webhook or the CLI,
-- whose tokens were then the same, and keep deciding.
alter table approval_links
  add column channel text check (channel in ('webhook', 'cli')),
  add column key_agent_id text;

-- Who chose where webhook deliveries, and so decision links, go: the agent of the API key that
-- set the endpoint, null when the CLI set it (recorded then as updated_by 'cli').
alter table webhook_endpoints add column key_agent_id text;
update webhook_endpoints set key_agent_id = updated_by where updated_by <> 'cli';

-- `show_approval_links` is retired: a held MCP result never carries a decision link. The column
-- stays for processes of the previous release during a rolling deploy; no session keeps it set.
update mcp_sessions set show_approval_links = false where show_approval_links;

-- Revoking another agent's MCP session takes `mcp_sessions:manage`, which full keys get by default,
-- like the other `:manage` scopes.
update api_keys set scopes = array_append(scopes, 'mcp_sessions:manage')
  where access = 'full' and not ('mcp_sessions:manage' = any (scopes));
