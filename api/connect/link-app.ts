import { findCredentialApp, type CredentialApp } from '../../activities/db/credential-apps.js';
import { findMcpApp } from '../../activities/db/mcp-apps.js';
import type { Db } from '../../infra/database/client.js';
import { findApp, type AppDefinition } from '../../workflows/catalog/index.js';
import type { AppInfo } from './pages/index.js';

/**
 * The app a connect link names: a catalog app, a remote MCP server registered as an app of the
 * link's environment (its authorization is discovered at the start of a connect), or an app
 * declared as taking a credential the user enters on the page (credential_app_schemes).
 */
export type LinkApp =
  | (AppInfo & { kind: 'catalog'; definition: AppDefinition })
  | (AppInfo & { kind: 'mcp' })
  | (AppInfo & { kind: 'credential'; declaration: CredentialApp });

export async function linkApp(sql: Db, environmentId: string, id: string): Promise<LinkApp | null> {
  const definition = findApp(id);
  if (definition) return { kind: 'catalog', id, name: definition.name, definition };
  const mcp = await findMcpApp(sql, environmentId, id);
  if (mcp) return { kind: 'mcp', id, name: mcp.name };
  const declaration = await findCredentialApp(sql, environmentId, id);
  return declaration ? { kind: 'credential', id, name: declaration.name, declaration } : null;
}
