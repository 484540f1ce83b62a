import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { findApp } from '../../workflows/catalog/index.js';
import { findConnectionById, readTokens } from '../db/connections.js';
import { oauth, oauthConfiguration } from './client.js';
import { clientOfConnection } from './credentials.js';
import { appEndpoints } from './endpoints.js';

/**
 * Tells the app to forget the grant (RFC 7009), refresh token first since it carries the grant.
 * Apps without a revocation endpoint are skipped, OpenAPI apps among them (a document's OAuth
 * flow names none): their tokens are forgotten here, and live at the app until they expire.
 * Returns whether a request was made.
 */
export function revokeAtProviderActivity(deps: { sql: Sql; config: Config }) {
  return async (connectionId: string): Promise<boolean> => {
    const { sql, config } = deps;
    const connection = await findConnectionById(sql, connectionId);
    const app = connection ? findApp(connection.app) : undefined;
    if (!connection || !app?.oauth.revocationPath) return false;
    const tokens = await readTokens(sql, config.encryption, connectionId);
    if (!tokens) return false;
    const configuration = oauthConfiguration(
      app,
      appEndpoints(app, config.apps.urls),
      await clientOfConnection(sql, config, connection),
    );
    if (tokens.refreshToken) {
      await oauth.tokenRevocation(configuration, tokens.refreshToken, {
        token_type_hint: 'refresh_token',
      });
    }
    await oauth.tokenRevocation(configuration, tokens.accessToken, {
      token_type_hint: 'access_token',
    });
    return true;
  };
}
