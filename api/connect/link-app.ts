import { findMcpApp } from '../../activities/db/mcp-apps.js';
import type { Db } from '../../infra/database/client.js';
import { findApp, type AppDefinition } from '../../workflows/catalog/index.js';
import type { AppInfo } from './pages/index.js';

/**
 * The app a connect link names: a catalog app, or a remote MCP server registered as an app of
 * the link's environment, whose authorization is discovered at the start of a connect.
 */
export type LinkApp =
  (AppInfo & { kind: 'catalog'; definition: AppDefinition }) | (AppInfo & { kind: 'mcp' });

export async function linkApp(sql: Db, environmentId: string, id: string): Promise<LinkApp | null> {
  const definition = findApp(id);
  if (definition) return { kind: 'catalog', id, name: definition.name, definition };
  const mcp = await findMcpApp(sql, environmentId, id);
  return mcp ? { kind: 'mcp', id, name: mcp.name } : null;
}
