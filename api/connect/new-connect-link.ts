import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { findCredentialApp } from '../../activities/db/credential-apps.js';
import { findMcpApp } from '../../activities/db/mcp-apps.js';
import { chooseClientForNewConnection } from '../../activities/oauth/credentials.js';
import { findOAuthApp } from '../../activities/oauth/oauth-app.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import { findApp } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../deps.js';
import { ApiError, ConflictError, InvalidRequestError } from '../errors.js';
import { newConnectLink, type LinkView } from './links.js';
import { assertMcpAppConnectable } from './mcp-link-readiness.js';

export interface NewConnectLinkInput {
  /** The user's external id; the user is created on their first link. */
  user: string;
  customer?: string;
  app: string;
  redirectUrl?: string;
}

/**
 * The app's id when a user could connect it now, else the ApiError saying why (400 unknown app,
 * 409 `auth_config_required` or `conflict`). Whatever offers a person a connect link asks this
 * first.
 */
export async function assertAppConnectable(
  deps: ApiDeps,
  environment: { id: string; name: string },
  id: string,
): Promise<string> {
  const catalogApp = findApp(id);
  const mcpApp = catalogApp ? null : await findMcpApp(deps.sql, environment.id, id);
  // An app declared as taking a credential the user enters needs nothing set up to connect.
  const credentialApp =
    catalogApp || mcpApp ? null : await findCredentialApp(deps.sql, environment.id, id);
  // Else an OpenAPI app whose document's OAuth flow its users connect through.
  const openapi =
    catalogApp || mcpApp || credentialApp
      ? null
      : await findOAuthApp(deps.sql, deps.config, environment.id, id);
  if (openapi && 'refused' in openapi) {
    throw new ConflictError(`App "${id}" cannot be connected: ${openapi.refused}.`, { app: id });
  }
  const app = catalogApp ?? mcpApp ?? credentialApp ?? openapi?.app;
  if (!app) {
    throw new InvalidRequestError(`Unknown app "${id}".`, [
      { path: 'app', message: 'unknown app' },
    ]);
  }
  // A remote MCP server that asks for no authorization serves every user as it is.
  if (mcpApp?.auth === 'none') {
    throw new ConflictError(
      `App "${mcpApp.id}" is a remote MCP server that asks for no authorization: its users need no connection, and its tools can be called for any user as they are.`,
      { app: mcpApp.id },
    );
  }
  if (mcpApp) {
    await assertMcpAppConnectable(deps, environment.id, mcpApp.id);
  } else if (credentialApp) {
    // Nothing to check: the page asks the user for the credential.
  } else if (!(await chooseClientForNewConnection(deps.sql, deps.config, environment.id, app.id))) {
    const how = catalogApp
      ? `register one at the app with the redirect URI that GET /v1/apps/${app.id} shows, add it with POST /v1/auth-configs, or enable funded access`
      : `register one at the app with the redirect URI ${connectRedirectUri(deps.config.api)} and add it with POST /v1/auth-configs`;
    throw new ApiError(
      'auth_config_required',
      `No OAuth client for "${app.id}" in environment "${environment.name}": ${how}.`,
      { app: app.id },
    );
  }
  return app.id;
}

/**
 * A connect link for a user and an app, checked first as every link is: the app must be the
 * catalog's, one of the environment's remote MCP apps, an app declared as taking a credential
 * the user enters, or an OpenAPI app connected through its document's OAuth flow (whose URLs
 * pass the outbound rules), and able to connect now (an OAuth client, or a remote MCP server
 * that is ready), so whoever asked learns at once, not the end user on a broken page. One path for `POST /v1/connect/links` and the console's reconnect link.
 */
export async function createCheckedConnectLink(
  deps: ApiDeps,
  environment: { id: string; name: string },
  input: NewConnectLinkInput,
): Promise<LinkView> {
  const app = await assertAppConnectable(deps, environment, input.app);
  const user = await upsertConnectedUser(deps.sql, environment.id, input.user, input.customer);
  return newConnectLink(deps.sql, deps.config, {
    environmentId: environment.id,
    connectedUserId: user.id,
    app,
    ...(input.redirectUrl ? { redirectUrl: input.redirectUrl } : {}),
  });
}
