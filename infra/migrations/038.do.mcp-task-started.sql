-- When the workflow behind an MCP task first ran. The API creates the task row, then starts its
-- workflow within a deadline; a start Temporal takes only after that deadline must not run the
-- approved call for an agent that was told the task failed. Whichever comes first wins: the
-- workflow stamps the row as it begins (and ends at once, running nothing, when the row is gone),
-- and the API deletes a row whose start it gave up on only while it is not stamped (else the
-- task is live and the agent gets it after all).
alter table mcp_tasks add column started_at timestamptz;
