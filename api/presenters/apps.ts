import { z } from 'zod';
import type { ConnectReadiness } from '../../activities/oauth/connect-readiness.js';
import { appEndpoints } from '../../activities/oauth/endpoints.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import type { Config } from '../../infra/config.js';
import { listActions, type AppDefinition } from '../../workflows/catalog/index.js';

/** The callback to register at the app; the same one `/connect/<token>/start` sends to it. */
export const redirectUriField = z.url().meta({
  description:
    "The redirect (callback) URI to register with the app's OAuth client: `<PUBLIC_URL>/connect/callback`, the same for every app",
});

const scopeSchema = z.object({
  scope: z.string().meta({ description: "The app's own OAuth scope, e.g. `repo`" }),
  grades: z.array(z.enum(['read', 'write'])).meta({
    description: 'What a connection granted this scope may do, as `granted_scopes` reports it',
  }),
  description: z
    .string()
    .nullable()
    .meta({ description: 'What it lets the product do, as the connect page tells the user' }),
  requested: z.boolean().meta({ description: 'Whether the connect flow asks the app for it' }),
});

const actionSchema = z.object({
  action: z.string().meta({ description: '`<app>.<action>`, as `/v1/actions/{action}/run` takes' }),
  scope: z.enum(['read', 'write', 'destructive']),
  description: z.string(),
});

const catalogFields = {
  app: z.string().meta({ description: 'The app key, as `app` in connect links and auth configs' }),
  name: z.string(),
  auth_kind: z.enum(['oauth2']),
  redirect_uri: redirectUriField,
  authorization_url: z.url().meta({
    description: 'Where the connect flow sends the user: the catalog default, or APP_URLS',
  }),
  api_base_url: z.url().meta({
    description: 'What actions and `/v1/proxy/{app}/…` call: the catalog default, or APP_URLS',
  }),
  scopes: z.array(scopeSchema).meta({
    description: 'The scopes the catalog knows; apps that grant by capability (Notion) have none',
  }),
  actions: z.array(actionSchema),
};

const readinessFields = {
  auth_config_id: z.string().nullable().meta({
    description: "The environment's enabled auth config that new connections use; null if none",
  }),
  oauth_client: z.enum(['auth_config', 'funded_access']).nullable().meta({
    description:
      'Whose OAuth client a new connection uses: the auth config, or the platform client under funded access. null: create an auth config first (connect links answer 409 `auth_config_required`)',
  }),
};

export const appSchema = z.object({ ...catalogFields, ...readinessFields }).meta({ id: 'App' });

export type AppView = z.infer<typeof appSchema>;
export type CatalogAppView = Omit<AppView, keyof typeof readinessFields>;

/** Scopes the connect flow requests first, then the others the catalog can grade. */
function scopesOf(app: AppDefinition): CatalogAppView['scopes'] {
  const requested = new Set(app.oauth.defaultScopes);
  const known = [...new Set([...app.oauth.defaultScopes, ...Object.keys(app.oauth.scopeGrades)])];
  return known.map((scope) => ({
    scope,
    grades: app.oauth.scopeGrades[scope] ?? [],
    description: app.oauth.scopeDescriptions?.[scope] ?? null,
    requested: requested.has(scope),
  }));
}

/** What any environment of this deployment needs to know to set an app up. */
export function presentCatalogApp(
  app: AppDefinition,
  config: Pick<Config, 'api' | 'apps'>,
): CatalogAppView {
  const endpoints = appEndpoints(app, config.apps.urls);
  return {
    app: app.id,
    name: app.name,
    auth_kind: 'oauth2',
    redirect_uri: connectRedirectUri(config.api),
    authorization_url: endpoints.authorizationUrl,
    api_base_url: endpoints.apiBaseUrl,
    scopes: scopesOf(app),
    actions: listActions(app.id).map((action) => ({
      action: `${action.app}.${action.name}`,
      scope: action.scope,
      description: action.description,
    })),
  };
}

/** The catalog entry with where this environment stands on connecting it. */
export function presentApp(
  app: AppDefinition,
  config: Pick<Config, 'api' | 'apps'>,
  readiness: ConnectReadiness | undefined,
): AppView {
  return {
    ...presentCatalogApp(app, config),
    auth_config_id: readiness?.authConfigId ?? null,
    oauth_client: readiness?.oauthClient ?? null,
  };
}
