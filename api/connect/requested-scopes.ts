import type { AppDefinition } from '../../workflows/catalog/index.js';
import type { RequestedScope } from './pages/index.js';

/** What the connect flow asks the app for, in the catalog's words where it has them. */
export function requestedScopes(app: AppDefinition): RequestedScope[] {
  return app.oauth.defaultScopes.map((scope) => ({
    scope,
    description: app.oauth.scopeDescriptions?.[scope],
  }));
}
