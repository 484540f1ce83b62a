import { findCredentialApp, type CredentialApp } from '../../activities/db/credential-apps.js';
import { findMcpApp } from '../../activities/db/mcp-apps.js';
import { findOpenApiApp } from '../../activities/db/openapi-apps.js';
import type { Db } from '../../infra/database/client.js';
import { findApp, type AppDefinition } from '../../workflows/catalog/index.js';
import type { AppInfo } from './pages/index.js';

/**
 * The app a connect link names: a catalog app, a remote MCP server registered as an app of the
 * link's environment (its authorization is discovered at the start of a connect), an app
 * declared as taking a credential the user enters on the page (credential_app_schemes), or an
 * OpenAPI app of the environment whose users connect through its document's OAuth 2.0 flow
 * (read from its accepted snapshot when the flow starts: activities/oauth/oauth-app.ts).
 */
export type LinkApp =
  | (AppInfo & { kind: 'catalog'; definition: AppDefinition })
  | (AppInfo & { kind: 'mcp' })
  | (AppInfo & { kind: 'credential'; declaration: CredentialApp })
  | (AppInfo & { kind: 'openapi' });

export async function linkApp(sql: Db, environmentId: string, id: string): Promise<LinkApp | null> {
  const definition = findApp(id);
  if (definition) return { kind: 'catalog', id, name: definition.name, definition };
  const mcp = await findMcpApp(sql, environmentId, id);
  if (mcp) return { kind: 'mcp', id, name: mcp.name };
  // An OpenAPI app taking an entered credential is declared as a credential app: it stops here.
  const declaration = await findCredentialApp(sql, environmentId, id);
  if (declaration) return { kind: 'credential', id, name: declaration.name, declaration };
  const openapi = await findOpenApiApp(sql, environmentId, id);
  return openapi ? { kind: 'openapi', id, name: openapi.name } : null;
}
