import { randomBytes } from 'node:crypto';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import {
  connectReadiness,
  type ConnectReadiness,
} from '../../activities/oauth/connect-readiness.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import {
  presentApp,
  presentCatalogApp,
  type AppView,
  type CatalogAppView,
} from '../../api/presenters/apps.js';
import { presentRemoteApp, type RemoteAppView } from '../../api/presenters/mcp-apps.js';
import { findApp, listApps, type AppDefinition } from '../../workflows/catalog/index.js';
import { loadConfig, type Config } from '../config.js';
import { readRunningStack } from '../dev/running-stack.js';
import type { Sql } from '../database/client.js';
import { loadOrCreateLocalState } from '../dev/local-state.js';
import { withCliDatabase } from './cli-database.js';
import { listMcpAppStandingsIn } from './mcp-apps.js';
import { openApiAppsTable } from './openapi-apps.js';
import { listOutput } from './table.js';

export type AppSettings = Pick<Config, 'api' | 'apps'>;

export interface AppsOptions {
  env?: string;
  json?: boolean;
}

/** The environment whose auth configs to report, with the database to read them from. */
export interface AppsEnvironment {
  sql: Sql;
  name: string;
}

/**
 * Runs an apps command: with `--env`, against the database (that environment's auth configs);
 * without, from the catalog and configuration alone, so it works before any database exists.
 */
export function withAppsEnvironment(
  options: AppsOptions,
  run: (environment?: AppsEnvironment) => Promise<string>,
): Promise<string> {
  const { env } = options;
  return env ? withCliDatabase((sql) => run({ sql, name: env })) : run();
}

/**
 * PUBLIC_URL, APP_URLS and the platform clients as the API reads them, so the redirect URI
 * printed here is the one the connect flow sends: from the environment (run the command with
 * the API's settings), or, for the local stack of `gatehouse dev` (no DATABASE_URL), where it
 * runs now (a taken port is replaced for a run), else its preferred API and demo-app ports.
 */
export async function appSettings(): Promise<AppSettings> {
  const local = process.env.DATABASE_URL ? null : await loadOrCreateLocalState();
  const running = local ? await readRunningStack() : null;
  const config = loadConfig({
    ...(local
      ? {
          API_PORT: String(local.api.port),
          APP_URLS: JSON.stringify({
            acme: running?.demoAppUrl ?? `http://127.0.0.1:${local.demoApp.port}`,
          }),
          ...(running ? { PUBLIC_URL: running.apiUrl } : {}),
        }
      : {}),
    // Nothing is sealed or opened here: a stand-in key lets the command run without the secret.
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://local',
  });
  return { api: config.api, apps: config.apps };
}

function catalogApp(id: string): AppDefinition {
  const app = findApp(id);
  if (!app) {
    const known = listApps()
      .map((a) => a.id)
      .join(', ');
    throw new Error(`unknown app "${id}"; known apps: ${known}`);
  }
  return app;
}

async function readinessIn(
  environment: AppsEnvironment,
  settings: AppSettings,
  apps: readonly AppDefinition[],
): Promise<Map<string, ConnectReadiness>> {
  const found = await findEnvironmentByName(environment.sql, environment.name);
  if (!found) throw new Error(`no environment "${environment.name}"`);
  return connectReadiness(
    environment.sql,
    settings,
    found.id,
    apps.map((app) => app.id),
  );
}

/** The API's answer with an environment; the catalog part alone without one. */
async function viewsOf(
  apps: readonly AppDefinition[],
  settings: AppSettings,
  environment: AppsEnvironment | undefined,
): Promise<(CatalogAppView | AppView)[]> {
  if (!environment) return apps.map((app) => presentCatalogApp(app, settings));
  const readiness = await readinessIn(environment, settings, apps);
  return apps.map((app) => presentApp(app, settings, readiness.get(app.id)));
}

function clientOf(view: CatalogAppView | AppView): string {
  if (!('oauth_client' in view)) return '';
  switch (view.oauth_client) {
    case 'auth_config':
      return `auth config ${view.auth_config_id ?? ''}`;
    case 'funded_access':
      return 'platform client (funded access)';
    case null:
      return 'none: create an auth config';
  }
}

const registerLine = (redirectUri: string) =>
  `Redirect URI to register at each app's OAuth client: ${redirectUri}`;

export async function listAppsCommand(
  settings: AppSettings,
  options: AppsOptions = {},
  environment?: AppsEnvironment,
): Promise<string> {
  const views = await viewsOf(listApps(), settings, environment);
  // With --env, the environment's remote MCP apps too, as GET /v1/apps lists them.
  const remote = environment
    ? (await listMcpAppStandingsIn(environment.sql, environment.name)).map(presentRemoteApp)
    : [];
  if (options.json && remote.length > 0) return JSON.stringify([...views, ...remote], null, 2);
  const table = listOutput(
    views,
    [
      ['APP', (v) => v.app],
      ['NAME', (v) => v.name],
      ['AUTH', (v) => v.auth_kind],
      ['ACTIONS', (v) => String(v.actions.length)],
      ...(environment ? ([['OAUTH CLIENT', clientOf]] as const) : []),
      [
        'SCOPES REQUESTED',
        (v) =>
          v.scopes
            .filter((s) => s.requested)
            .map((s) => s.scope)
            .join(' ') || '(none)',
      ],
    ],
    { ...options, empty: '(no apps)' },
  );
  if (options.json) return table;
  const imported = environment ? await openApiAppsTable(environment.sql, environment.name) : null;
  return [
    table,
    '',
    registerLine(connectRedirectUri(settings.api)),
    ...(remote.length > 0 && environment ? ['', remoteTable(remote, environment.name)] : []),
    ...(imported ? ['', imported] : []),
  ].join('\n');
}

/** The remote MCP apps of an environment, one line each. */
function remoteTable(remote: RemoteAppView[], environment: string): string {
  const table = listOutput(
    remote,
    [
      ['APP', (view) => view.app],
      ['NAME', (view) => view.name],
      ['AUTH', (view) => view.auth],
      ['ACTIONS', (view) => String(view.actions.length)],
      [
        'PENDING',
        (view) =>
          view.snapshot.pending ? `snapshot v${String(view.snapshot.pending.version)}` : 'none',
      ],
      ['SERVER', (view) => view.server_url],
    ],
    { empty: '' },
  );
  return [`Remote MCP apps of ${environment}:`, table].join('\n');
}

export async function showAppCommand(
  settings: AppSettings,
  id: string,
  options: AppsOptions = {},
  environment?: AppsEnvironment,
): Promise<string> {
  const [view] = await viewsOf([catalogApp(id)], settings, environment);
  if (!view) throw new Error(`unknown app "${id}"`);
  if (options.json) return JSON.stringify(view, null, 2);
  const scopes = listOutput(
    view.scopes,
    [
      ['SCOPE', (s) => s.scope],
      ['GRADES', (s) => s.grades.join(', ') || '(none)'],
      ['REQUESTED', (s) => (s.requested ? 'yes' : 'no')],
    ],
    { empty: '(no scopes: the app grants access by capability)' },
  );
  const actions = listOutput(
    view.actions,
    [
      ['ACTION', (a) => a.action],
      ['SCOPE', (a) => a.scope],
      ['DESCRIPTION', (a) => a.description],
    ],
    { empty: '(no actions)' },
  );
  return [
    `app            ${view.app}`,
    `name           ${view.name}`,
    `auth kind      ${view.auth_kind}`,
    `redirect URI   ${view.redirect_uri}`,
    `authorize URL  ${view.authorization_url}`,
    `API base URL   ${view.api_base_url}`,
    ...(environment ? [`oauth client   ${clientOf(view)} (environment ${environment.name})`] : []),
    '',
    scopes,
    '',
    actions,
    '',
    `Register the redirect URI above as the callback of your OAuth client at ${view.name}, then`,
    `add the client with POST /v1/auth-configs {"app":"${view.app}","name":"…","clientId":"…","clientSecret":"…"}.`,
  ].join('\n');
}
