import type { Db } from '../../infra/database/client.js';
import type { McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';
import type { CallScope } from '../../workflows/catalog/index.js';

/** A remote MCP server registered as an app of an environment (issue 21). */
export interface McpApp {
  environmentId: string;
  id: string;
  name: string;
  /** The server's Streamable HTTP endpoint. */
  serverUrl: string;
  /** What discovery found: `oauth` when the server asks for authorization. */
  auth: 'none' | 'oauth';
  toolAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  acceptedVersion: number | null;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string;
}

export interface McpAppSnapshot {
  environmentId: string;
  appId: string;
  version: number;
  tools: McpToolDefinition[];
  fetchedAt: Date;
  fetchedBy: string;
  acceptedAt: Date | null;
  acceptedBy: string | null;
}

const appColumns = (sql: Db) => sql`
  environment_id, id, name, server_url, auth, tool_allowlist, grade_overrides, accepted_version,
  created_at, updated_at, updated_by`;

const snapshotColumns = (sql: Db) => sql`
  environment_id, app_id, version, tools, fetched_at, fetched_by, accepted_at, accepted_by`;

export async function findMcpApp(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<McpApp | null> {
  const [row]: [McpApp?] = await sql`
    select ${appColumns(sql)} from mcp_apps where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}

export async function listMcpApps(sql: Db, environmentId: string): Promise<McpApp[]> {
  return sql<McpApp[]>`
    select ${appColumns(sql)} from mcp_apps where environment_id = ${environmentId} order by id`;
}

/** The snapshot whose tools calls may use; null until one is accepted. */
export async function findAcceptedSnapshot(
  sql: Db,
  app: Pick<McpApp, 'environmentId' | 'id' | 'acceptedVersion'>,
): Promise<McpAppSnapshot | null> {
  if (app.acceptedVersion === null) return null;
  const [row]: [McpAppSnapshot?] = await sql`
    select ${snapshotColumns(sql)} from mcp_app_snapshots
    where environment_id = ${app.environmentId} and app_id = ${app.id}
      and version = ${app.acceptedVersion}`;
  return row ?? null;
}
