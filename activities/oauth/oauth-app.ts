import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import { findApp, type AppDefinition, type OAuthSettings } from '../../workflows/catalog/index.js';
import type { AccountIdentity } from '../../workflows/catalog/types.js';
import { mcpServerFetch } from '../mcp-apps/server-fetch.js';
import {
  findOpenApiOAuthScheme,
  oauthFlowProblem,
  type OpenApiOAuthScheme,
} from '../openapi-registry/oauth-scheme.js';
import { oauth, oauthConfiguration, type ClientCredentials } from './client.js';
import { appEndpoints, type AppEndpoints } from './endpoints.js';

export interface OAuthEndpoints extends AppEndpoints {
  /** Where a refresh grant is sent: the token URL, unless an OpenAPI flow names a refresh URL. */
  refreshUrl: string;
}

interface OAuthAppCommon {
  id: string;
  name: string;
  oauth: OAuthSettings;
  accountIdentity?: AccountIdentity;
  apiHeaders?: Record<string, string>;
  endpoints: OAuthEndpoints;
  /**
   * Token requests go through the guarded connection remote MCP servers use (addresses checked
   * unless MCP_APPS_ALLOW_PRIVATE, no redirects): the URL came from a document an API caller
   * gave, not from the catalog or the operator's APP_URLS.
   */
  guarded: boolean;
}

/**
 * An app users connect through the OAuth 2.0 authorization-code flow: a catalog app, or an
 * OpenAPI app of the environment whose accepted document describes that flow. One shape for the
 * connect flow, the code exchange, refreshes and revocation, so neither kind has a path of its own.
 */
export type OAuthApp = OAuthAppCommon &
  ({ source: 'catalog'; definition: AppDefinition } | { source: 'openapi'; schemeName: string });

export type OAuthAppLookup =
  | { app: OAuthApp }
  /** The app exists but cannot be connected through OAuth now: why, in a sentence's end. */
  | { refused: string }
  /** No app of that id connects through OAuth in the environment. */
  | null;

/**
 * An OpenAPI app's settings: what the document cannot say is the standard's default. The client
 * authenticates with HTTP basic (RFC 6749 §2.3.1: every server supports it), PKCE (S256) always,
 * scopes space-separated, and a token answer without `expires_in` is taken not to expire (a 401
 * from the app forces one refresh). The document names no revocation endpoint: a revoked
 * connection is forgotten here only. It names no way to learn the account either, so a reconnect
 * is renewed by whichever account comes back.
 */
function openApiOAuthApp(scheme: OpenApiOAuthScheme): OAuthApp {
  const { flow } = scheme;
  const descriptions = Object.fromEntries(
    scheme.scopes.flatMap((scope) => {
      const text = Object.hasOwn(flow.scopes, scope) ? flow.scopes[scope] : undefined;
      return text ? [[scope, text]] : [];
    }),
  );
  return {
    source: 'openapi',
    schemeName: scheme.schemeName,
    id: scheme.appId,
    name: scheme.name,
    oauth: {
      authorizationPath: flow.authorizationUrl,
      tokenPath: flow.tokenUrl,
      defaultScopes: scheme.scopes,
      scopeGrades: {},
      scopeDescriptions: descriptions,
      scopeSeparator: ' ',
      tokenEndpointAuthMethod: 'client_secret_basic',
      pkce: true,
      defaultAccessTokenTtlSeconds: null,
    },
    endpoints: {
      // The document names no issuer; the authorization server's origin stands for it.
      issuer: new URL(flow.authorizationUrl).origin,
      authorizationUrl: flow.authorizationUrl,
      tokenUrl: flow.tokenUrl,
      refreshUrl: flow.refreshUrl ?? flow.tokenUrl,
      revocationUrl: null,
      apiBaseUrl: scheme.baseUrl,
    },
    guarded: true,
  };
}

/** A catalog app as the OAuth code sees it, at this deployment's endpoints (APP_URLS). */
export function catalogOAuthApp(definition: AppDefinition, urls: Config['apps']['urls']): OAuthApp {
  const endpoints = appEndpoints(definition, urls);
  return {
    source: 'catalog',
    definition,
    id: definition.id,
    name: definition.name,
    oauth: definition.oauth,
    ...(definition.accountIdentity ? { accountIdentity: definition.accountIdentity } : {}),
    ...(definition.apiHeaders ? { apiHeaders: definition.apiHeaders } : {}),
    endpoints: { ...endpoints, refreshUrl: endpoints.tokenUrl },
    guarded: false,
  };
}

/**
 * The OAuth endpoints and settings of app `appId` in environment `environmentId`: the catalog's,
 * else an OpenAPI app's from its accepted snapshot, its URLs checked by the outbound rules of
 * base URLs. A remote MCP app is not here: its authorization is discovered (activities/mcp-auth).
 */
export async function findOAuthApp(
  sql: Db,
  config: Pick<Config, 'apps' | 'mcpApps'>,
  environmentId: string,
  appId: string,
): Promise<OAuthAppLookup> {
  const definition = findApp(appId);
  if (definition) return { app: catalogOAuthApp(definition, config.apps.urls) };
  const found = await findOpenApiOAuthScheme(sql, environmentId, appId);
  if (!found) return null;
  if (found.kind === 'other') return { refused: found.reason };
  const problem = await oauthFlowProblem(found.scheme.flow, config.mcpApps.allowPrivate);
  if (problem) return { refused: problem };
  return { app: openApiOAuthApp(found.scheme) };
}

/** A token answer is a few kilobytes; an endless one must not be held. */
const MAX_TOKEN_ANSWER_BYTES = 1024 * 1024;

/**
 * The openid-client configuration for a request to `app`'s authorization server with `client`;
 * `grant: 'refresh'` aims the token endpoint at the refresh URL.
 */
export function configurationFor(
  app: OAuthApp,
  credentials: ClientCredentials,
  config: Pick<Config, 'mcpApps'>,
  options: { grant?: 'refresh' } = {},
): oauth.Configuration {
  const endpoints =
    options.grant === 'refresh'
      ? { ...app.endpoints, tokenUrl: app.endpoints.refreshUrl }
      : app.endpoints;
  const configuration = oauthConfiguration(app, endpoints, credentials);
  if (app.guarded) {
    // No redirect is followed: openid-client asks for none, and this connection makes none.
    configuration[oauth.customFetch] = mcpServerFetch({
      allowPrivate: config.mcpApps.allowPrivate,
      maxResponseBytes: MAX_TOKEN_ANSWER_BYTES,
    });
  }
  return configuration;
}
