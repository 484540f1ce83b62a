import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { findApp, gradeScopes } from '../../workflows/catalog/index.js';
import type { ConnectOutcome } from '../../workflows/connection-types.js';
import { consumeLink } from '../db/connect-links.js';
import { saveAuthorizedConnection } from '../db/connections.js';
import { consumeAttempt, readAttemptSecrets } from '../db/oauth-attempts.js';
import { oauth, oauthConfiguration } from './client.js';
import { chooseClientForNewConnection } from './credentials.js';
import { appEndpoints } from './endpoints.js';
import { scopesFrom, tokenSetFrom } from './token-response.js';

export const CONNECT_CALLBACK_PATH = '/connect/callback';

interface AttemptContext {
  linkId: string;
  environmentId: string;
  connectedUserId: string;
  app: string;
  purpose: 'connect' | 'reconnect';
  connectionId: string | null;
  linkUsedAt: Date | null;
  linkExpiresAt: Date;
  attemptExpiresAt: Date;
}

async function attemptContext(sql: Sql, attemptId: string): Promise<AttemptContext | null> {
  const [row]: [AttemptContext?] = await sql`
    select l.id as link_id, l.environment_id, l.connected_user_id, l.app, l.purpose, l.connection_id,
           l.used_at as link_used_at, l.expires_at as link_expires_at, a.expires_at as attempt_expires_at
    from oauth_attempts a join connect_links l on l.id = a.link_id
    where a.id = ${attemptId}`;
  return row ?? null;
}

/**
 * Exchanges the parked authorization code for tokens (openid-client checks state, PKCE and the
 * issuer) and stores the connection, consuming the single-use link in the same transaction. The
 * attempt is burnt whatever happens: a code is good for one exchange. Nothing half-made is kept.
 */
export function exchangeCodeActivity(deps: { sql: Sql; config: Config; logger: Logger }) {
  return async (attemptId: string): Promise<ConnectOutcome> => {
    const { sql, config } = deps;
    const context = await attemptContext(sql, attemptId);
    const secrets = await readAttemptSecrets(sql, config.encryption, attemptId);
    await consumeAttempt(sql, attemptId);
    const app = context ? findApp(context.app) : undefined;
    if (!context || !secrets || !app) return { ok: false, code: 'invalid_state' };
    const now = new Date();
    if (context.attemptExpiresAt < now) return { ok: false, code: 'attempt_expired' };
    if (context.linkUsedAt) return { ok: false, code: 'link_used' };
    if (context.linkExpiresAt < now) return { ok: false, code: 'link_expired' };

    const client = await chooseClientForNewConnection(sql, config, context.environmentId, app.id);
    if (!client) return { ok: false, code: 'app_not_configured' };
    const configuration = oauthConfiguration(
      app,
      appEndpoints(app, config.apps.urls),
      client.credentials,
    );
    const callbackUrl = new URL(
      `${config.api.publicUrl}${CONNECT_CALLBACK_PATH}?${secrets.callbackQuery}`,
    );
    let response;
    try {
      response = await oauth.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: callbackUrl.searchParams.get('state') ?? '',
      });
    } catch (error) {
      deps.logger.warn(
        { app: app.id, attemptId, error: error instanceof Error ? error.message : 'unknown' },
        'authorization code exchange failed',
      );
      return { ok: false, code: 'exchange_failed' };
    }
    const providerScopes = scopesFrom(app, response, app.oauth.defaultScopes);
    const saved = await sql.begin(async (tx) => {
      if (!(await consumeLink(tx, context.linkId))) return null;
      return saveAuthorizedConnection(
        tx,
        config.encryption,
        {
          environmentId: context.environmentId,
          connectedUserId: context.connectedUserId,
          app: app.id,
          authConfigId: client.authConfigId,
          tokens: tokenSetFrom(app, response, now),
          grantedScopes: gradeScopes(app, providerScopes),
          providerScopes,
        },
        context.purpose === 'reconnect' ? (context.connectionId ?? undefined) : undefined,
      );
    });
    if (!saved) return { ok: false, code: 'link_used' };
    return { ok: true, connectionId: saved.id, linkId: context.linkId };
  };
}
