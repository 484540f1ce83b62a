import { acme } from './apps/acme.js';
import type { AppDefinition } from './types.js';

export type { AppDefinition, OAuthSettings, ScopeGrade } from './types.js';

const apps: readonly AppDefinition[] = [acme];

const byId = new Map(apps.map((app) => [app.id, app]));

export function findApp(id: string): AppDefinition | undefined {
  return byId.get(id);
}

export function listApps(): readonly AppDefinition[] {
  return apps;
}

/** The Gatehouse grades (`read`, `write`) that a set of provider scopes amounts to. */
export function gradeScopes(app: AppDefinition, providerScopes: readonly string[]): string[] {
  const grades = new Set(providerScopes.flatMap((scope) => app.oauth.scopeGrades[scope] ?? []));
  return (['read', 'write'] as const).filter((grade) => grades.has(grade));
}
