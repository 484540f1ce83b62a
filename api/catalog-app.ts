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
