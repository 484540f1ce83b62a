import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { findApp, gradeScopes } from '../../workflows/catalog/index.js';
import type { ConnectOutcome } from '../../workflows/connection-types.js';
import { consumeLink } from '../db/connect-links.js';
import { authorizeConnection } from '../db/connections.js';
import { consumeAttempt, readAttemptSecrets } from '../db/oauth-attempts.js';
import { AccountUnverified, learnAccountId } from './account-identity.js';
import { oauth, oauthConfiguration } from './client.js';
import { chooseClientForNewConnection } from './credentials.js';
import { appEndpoints } from './endpoints.js';
import { connectRedirectUri } from './redirect-uri.js';
import { scopesFrom, tokenSetFrom } from './token-response.js';

/** Rolls the transaction back (the link stays unused) and says why. */
class NotStored extends Error {
  constructor(readonly code: 'link_used' | 'account_mismatch' | 'connection_revoked') {
    super(code);
  }
}

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
 * issuer), learns which account at the app granted them (the catalog's `accountIdentity`), and
 * stores the connection, consuming the single-use link in the same transaction; a reconnect
 * that brought another account stores nothing and leaves the link usable. The attempt is burnt
 * whatever happens: a code is good for one exchange. Nothing half-made is kept.
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
    const endpoints = appEndpoints(app, config.apps.urls);
    const configuration = oauthConfiguration(app, endpoints, client.credentials);
    const callbackUrl = new URL(`${connectRedirectUri(config.api)}?${secrets.callbackQuery}`);
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
    let accountId: string | null;
    try {
      accountId = await learnAccountId(app, response, endpoints.apiBaseUrl);
    } catch (error) {
      if (!(error instanceof AccountUnverified)) throw error;
      // The tokens are dropped unused: without the account, a reconnect could not be checked.
      deps.logger.warn({ app: app.id, attemptId, error: error.message }, 'account not learned');
      return { ok: false, code: 'account_unverified' };
    }
    const providerScopes = scopesFrom(app, response, app.oauth.defaultScopes);
    let outcome;
    try {
      outcome = await sql.begin(async (tx) => {
        if (!(await consumeLink(tx, context.linkId))) throw new NotStored('link_used');
        const authorization = await authorizeConnection(
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
            accountId,
          },
          context.purpose === 'reconnect' ? (context.connectionId ?? undefined) : undefined,
        );
        // Rolled back with the link: the user may come back with the right account.
        if (authorization.kind !== 'saved') throw new NotStored(authorization.kind);
        return authorization;
      });
    } catch (error) {
      if (error instanceof NotStored) return { ok: false, code: error.code };
      throw error;
    }
    if (outcome.replacedId) {
      // Another account at the app is another connection (issue 12): the old one was revoked.
      deps.logger.info(
        {
          app: app.id,
          attemptId,
          connectionId: outcome.connection.id,
          revoked: outcome.replacedId,
        },
        'connection replaced by another account',
      );
    }
    const saved = outcome.connection;
    return { ok: true, connectionId: saved.id, linkId: context.linkId };
  };
}
