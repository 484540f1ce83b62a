import { acmeActions } from './actions/acme.js';
import { acme } from './apps/acme.js';
import type { ActionDefinition, AppDefinition } from './types.js';

export type {
  ActionDefinition,
  AppDefinition,
  CallScope,
  HttpMethod,
  OAuthSettings,
  ScopeGrade,
  UpstreamRequest,
  UpstreamResponse,
} from './types.js';

const apps: readonly AppDefinition[] = [acme];

const actions: readonly ActionDefinition[] = [...acmeActions];

const appsById = new Map(apps.map((app) => [app.id, app]));
const actionsById = new Map(actions.map((action) => [`${action.app}.${action.name}`, action]));

export function findApp(id: string): AppDefinition | undefined {
  return appsById.get(id);
}

export function listApps(): readonly AppDefinition[] {
  return apps;
}

/** An action by its full name, `<app>.<action>`. */
export function findAction(id: string): ActionDefinition | undefined {
  return actionsById.get(id);
}

export function listActions(app?: string): readonly ActionDefinition[] {
  return app === undefined ? actions : actions.filter((action) => action.app === app);
}

/** The Gatehouse grades (`read`, `write`) that a set of provider scopes amounts to. */
export function gradeScopes(app: AppDefinition, providerScopes: readonly string[]): string[] {
  const grades = new Set(providerScopes.flatMap((scope) => app.oauth.scopeGrades[scope] ?? []));
  return (['read', 'write'] as const).filter((grade) => grades.has(grade));
}
