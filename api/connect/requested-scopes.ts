import type { AppDefinition } from '../../workflows/catalog/index.js';
import type { RequestedScope } from './pages/index.js';

/**
 * What the connect flow asks the app for, in the app's words where it has them (the catalog's,
 * or an OpenAPI document's scope descriptions).
 */
export function requestedScopes(app: Pick<AppDefinition, 'oauth'>): RequestedScope[] {
  const descriptions = app.oauth.scopeDescriptions ?? {};
  // Own entries only: a document's scope may be called `constructor`.
  return app.oauth.defaultScopes.map((scope) => ({
    scope,
    description: Object.hasOwn(descriptions, scope) ? descriptions[scope] : undefined,
  }));
}
