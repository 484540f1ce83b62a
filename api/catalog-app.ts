import { findEnvironmentAppRecord } from '../activities/apps/directory.js';
import { listMcpApps } from '../activities/db/mcp-apps.js';
import type { Db } from '../infra/database/client.js';
import { findApp, listApps, type AppDefinition } from '../workflows/catalog/index.js';
import { InvalidRequestError } from './errors.js';

/** The catalog's app ids, for messages and OpenAPI descriptions. */
export function knownAppIds(): string[] {
  return listApps().map((app) => app.id);
}

/**
 * The catalog app a request names in `path`, or a 400 naming that field and listing the apps
 * there are. Every setting stored per app goes through this: a name outside the catalog could
 * never be used, and names such as `__proto__` must not reach a lookup by plain property.
 */
export function catalogApp(id: string, path = 'app'): AppDefinition {
  const app = findApp(id);
  if (app) return app;
  const known = knownAppIds().join(', ');
  throw new InvalidRequestError(`Unknown app "${id}"; known apps: ${known}.`, [
    { path, message: `unknown app; known apps: ${known}` },
  ]);
}

/**
 * The app of the environment a setting names in `path`: a catalog app, or a remote MCP server
 * registered as an app of this environment, whose id is the answer. Another
 * environment's MCP app is refused as unknown, like any unknown name; the known apps listed are
 * the catalog's and this environment's.
 */
export async function environmentApp(
  sql: Db,
  environmentId: string,
  id: string,
  path = 'app',
): Promise<string> {
  const found = await findEnvironmentAppRecord(sql, environmentId, id);
  if (found) return found.app.id;
  const remote = (await listMcpApps(sql, environmentId)).map((app) => app.id);
  const known = [...knownAppIds(), ...remote].join(', ');
  throw new InvalidRequestError(`Unknown app "${id}"; known apps: ${known}.`, [
    { path, message: `unknown app; known apps: ${known}` },
  ]);
}
