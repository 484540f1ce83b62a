import type { Db } from '../../infra/database/client.js';
import type { McpTaskSupport } from './mcp-tool-call.js';
import type { McpToolTarget } from './mcp-tool-upstream.js';

/**
 * Where a call to `tool` of a remote MCP app goes, and whether the server's newest listing says
 * the tool may run as a task (`execution.taskSupport` `optional` or `required`; the listing
 * keeps nothing else of it). The newest listing rather than the accepted snapshot: how a tool
 * is waited for is not what an operator accepts (activities/mcp-apps/README.md, Tasks), and
 * the server's tools as it serves them now decide how it must be called. Null: no such app.
 */
export async function findMcpToolTarget(
  sql: Db,
  environmentId: string,
  appId: string,
  tool: string,
): Promise<McpToolTarget | null> {
  const [row]: [{ id: string; serverUrl: string; taskSupport: string | null }?] = await sql`
    select a.id, a.server_url,
      (select t.value -> 'execution' ->> 'taskSupport'
         from mcp_app_snapshots s cross join lateral jsonb_array_elements(s.tools) as t(value)
        where s.environment_id = a.environment_id and s.app_id = a.id
          and s.version = (select max(version) from mcp_app_snapshots n
                            where n.environment_id = a.environment_id and n.app_id = a.id)
          and t.value ->> 'name' = ${tool}) as task_support
    from mcp_apps a
    where a.environment_id = ${environmentId} and a.id = ${appId}`;
  if (!row) return null;
  const support: McpTaskSupport | null =
    row.taskSupport === 'optional' || row.taskSupport === 'required' ? row.taskSupport : null;
  return { id: row.id, serverUrl: row.serverUrl, taskSupport: support };
}
