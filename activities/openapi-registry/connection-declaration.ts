/**
 * Keeps what the connect flow knows of an OpenAPI app in step with how its users connect
 * (connection-scheme.ts): an app connected with an entered credential is declared in
 * `credential_app_schemes`, so a connect link for it shows the hosted credential page; any other
 * app is not, and withdrawing the declaration revokes its credential connections (a secret
 * entered for an API key must never be sent where the app now takes another scheme). Run in the
 * transaction that changed the app, after the change.
 */
import type { Db } from '../../infra/database/client.js';
import { removeCredentialApp, saveCredentialApp } from '../db/credential-apps.js';
import type { OpenApiAppStanding } from '../db/openapi-apps.js';
import { connectionOf, type OpenApiConnection } from './connection-scheme.js';

/** Who declared the credential apps of this registry (each registry removes only its own). */
export const DECLARED_BY = 'openapi';

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
  return connection;
}

/** The app is gone: its declaration and its users' credential connections with it. */
export async function withdrawConnection(
  tx: Db,
  environmentId: string,
  appId: string,
): Promise<void> {
  await removeCredentialApp(tx, environmentId, appId, DECLARED_BY);
}
