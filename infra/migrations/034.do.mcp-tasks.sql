-- MCP tasks: task-augmented `tools/call`s. The governed call stays the call workflow's; the task is
-- what the agent polls: who may see it (the agent, in its environment, for the same user), the
-- workflow that runs a held call once its approval is decided (`mcp-task/<environment>/<id>`),
-- and, once it ends, its answer. The answer is sealed: it may hold the app's data.
create table mcp_tasks (
  -- Random and unguessable: a task id is all a poll names.
  id text primary key,
  environment_id uuid not null references environments (id) on delete cascade,
  agent_id text not null,
  -- The key the task was created with (directly or through an MCP session it minted): the run
  -- after the approval is refused once the key is revoked.
  key_id uuid not null references api_keys (id) on delete cascade,
  user_external_id text not null,
  tool text not null,
  action text not null,
  approval_id uuid references approvals (id) on delete set null,
  workflow_id text,
  status text not null check (status in ('working', 'completed', 'failed', 'cancelled')),
  status_message text,
  -- The call's answer (a CallAnswer, sealed), once the task is terminal.
  answer text,
  created_at timestamptz not null default now(),
  last_updated_at timestamptz not null default now(),
  ttl_ms bigint not null,
  expires_at timestamptz not null
);

-- tasks/list: an agent's tasks for one user in its environment, newest first.
create index mcp_tasks_owner_idx
  on mcp_tasks (environment_id, agent_id, user_external_id, created_at desc, id desc);

-- Tasks past their ttl are deleted a batch at a time as new ones are created.
create index mcp_tasks_expiry_idx on mcp_tasks (expires_at);
