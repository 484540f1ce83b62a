/**
 * Keeps what the connect flow knows of an OpenAPI app in step with how its users connect
 * (connection-scheme.ts): an app connected with an entered credential is declared in
 * `credential_app_schemes`, so a connect link for it shows the hosted credential page; any other
 * app is not, and withdrawing the declaration revokes its credential connections (a secret
 * entered for an API key must never be sent where the app now takes another scheme). Likewise an
 * app that no longer connects through its document's OAuth flow has its OAuth connections revoked
 * (tokens erased): their tokens were granted for that flow. An app connected through OAuth needs
 * no declaration: the connect flow reads the flow from the accepted snapshot
 * (oauth-scheme.ts). Run in the transaction that changed the app, after the change.
 */
import type { Db } from '../../infra/database/client.js';
import { removeCredentialApp, saveCredentialApp } from '../db/credential-apps.js';
import type { OpenApiAppStanding } from '../db/openapi-apps.js';
import { connectionOf, type OpenApiConnection } from './connection-scheme.js';

/** Who declared the credential apps of this registry (each registry removes only its own). */
export const DECLARED_BY = 'openapi';

/** The app's OAuth connections revoked here, tokens erased; rows kept for audit. */
async function revokeOAuthConnections(tx: Db, environmentId: string, appId: string): Promise<void> {
  await tx`
    update connections set status = 'revoked', access_token_sealed = null,
      refresh_token_sealed = null, revoked_at = coalesce(revoked_at, now()), updated_at = now()
    where environment_id = ${environmentId} and app = ${appId} and auth_kind = 'oauth2'
      and status <> 'revoked'`;
}

export async function declareConnection(
  tx: Db,
  standing: OpenApiAppStanding,
): Promise<OpenApiConnection> {
  const { app, accepted } = standing;
  const connection = connectionOf(app, accepted);
  if (connection.kind === 'credential') {
    await saveCredentialApp(tx, {
      environmentId: app.environmentId,
      id: app.id,
      name: app.name,
      scheme: connection.scheme,
      hint: null,
      declaredBy: DECLARED_BY,
    });
  } else {
    await removeCredentialApp(tx, app.environmentId, app.id, DECLARED_BY);
  }
  if (connection.kind !== 'oauth2') await revokeOAuthConnections(tx, app.environmentId, app.id);
  return connection;
}

/**
 * The app is gone: its declaration and its users' connections with it, and its auth configs
 * disabled. An app registered later under the same id may be another service, which must never
 * receive these users' tokens nor the operator's client secret.
 */
export async function withdrawConnection(
  tx: Db,
  environmentId: string,
  appId: string,
): Promise<void> {
  await removeCredentialApp(tx, environmentId, appId, DECLARED_BY);
  await revokeOAuthConnections(tx, environmentId, appId);
  await tx`
    update auth_configs set enabled = false, disabled_at = now()
    where environment_id = ${environmentId} and app = ${appId} and enabled`;
}
