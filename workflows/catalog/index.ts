import { acmeActions } from './actions/acme.js';
import { githubActions } from './actions/github.js';
import { gmailActions } from './actions/gmail.js';
import { googleCalendarActions } from './actions/google-calendar.js';
import { linearActions } from './actions/linear.js';
import { notionActions } from './actions/notion.js';
import { slackActions } from './actions/slack.js';
import { acme } from './apps/acme.js';
import { github } from './apps/github.js';
import { gmail } from './apps/gmail.js';
import { googleCalendar } from './apps/google-calendar.js';
import { linear } from './apps/linear.js';
import { notion } from './apps/notion.js';
import { slack } from './apps/slack.js';
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

const apps: readonly AppDefinition[] = [acme, github, slack, googleCalendar, gmail, linear, notion];

const actions: readonly ActionDefinition[] = [
  ...acmeActions,
  ...githubActions,
  ...slackActions,
  ...googleCalendarActions,
  ...gmailActions,
  ...linearActions,
  ...notionActions,
];

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
