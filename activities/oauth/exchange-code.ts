import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { findApp, gradeScopes } from '../../workflows/catalog/index.js';
import type { ConnectOutcome } from '../../workflows/connection-types.js';
import { findAttemptAuthorization } from '../db/mcp-authorizations.js';
import { consumeAttempt, readAttemptSecrets } from '../db/oauth-attempts.js';
import { exchangeMcpCode } from '../mcp-auth/exchange-mcp-code.js';
import { AccountUnverified, learnAccountId } from './account-identity.js';
import { oauth } from './client.js';
import { chooseClientForNewConnection } from './credentials.js';
import { configurationFor, findOAuthApp } from './oauth-app.js';
import { connectRedirectUri } from './redirect-uri.js';
import { attemptContext, storeAuthorization } from './store-authorization.js';
import { scopesFrom, tokenSetFrom } from './token-response.js';

/**
 * What an OpenAPI app's connection may be used for: every grade, as for remote MCP apps and
 * entered credentials. Its document grades operations, not scopes; the app itself refuses what
 * its token does not allow.
 */
export const OPENAPI_GRANTED_GRADES = ['read', 'write'];

/**
 * Exchanges the parked authorization code for tokens (openid-client checks state, PKCE and the
 * issuer), learns which account at the app granted them (the catalog's `accountIdentity`), and
 * stores the connection, consuming the single-use link in the same transaction; a reconnect
 * that brought another account stores nothing and leaves the link usable. The attempt is burnt
 * whatever happens: a code is good for one exchange. Nothing half-made is kept. An attempt at a
 * remote MCP app's authorization server is exchanged by the SDK (exchange-mcp-code.ts); an OpenAPI
 * app's here, at its accepted document's token URL (oauth-app.ts).
 */
export function exchangeCodeActivity(deps: { sql: Sql; config: Config; logger: Logger }) {
  return async (attemptId: string): Promise<ConnectOutcome> => {
    const { sql, config } = deps;
    const context = await attemptContext(sql, attemptId);
    const secrets = await readAttemptSecrets(sql, config.encryption, attemptId);
    await consumeAttempt(sql, attemptId);
    const catalog = context ? findApp(context.app) : undefined;
    const mcp = context && !catalog ? await findAttemptAuthorization(sql, attemptId) : null;
    const found =
      context && !mcp ? await findOAuthApp(sql, config, context.environmentId, context.app) : null;
    if (!context || !secrets || (!mcp && !found)) return { ok: false, code: 'invalid_state' };
    const now = new Date();
    if (context.attemptExpiresAt < now) return { ok: false, code: 'attempt_expired' };
    if (context.linkUsedAt) return { ok: false, code: 'link_used' };
    if (context.linkExpiresAt < now) return { ok: false, code: 'link_expired' };
    if (mcp) return exchangeMcpCode(deps, { attemptId, context, secrets, authorization: mcp });
    if (!found) return { ok: false, code: 'invalid_state' };
    if ('refused' in found) {
      // An OpenAPI app whose accepted document no longer allows this flow (or its URLs).
      deps.logger.warn(
        { app: context.app, attemptId, reason: found.refused },
        'app not connectable',
      );
      return { ok: false, code: 'app_not_configured' };
    }
    const { app } = found;

    const client = await chooseClientForNewConnection(sql, config, context.environmentId, app.id);
    if (!client) return { ok: false, code: 'app_not_configured' };
    const configuration = configurationFor(app, client.credentials, config);
    const callbackUrl = new URL(`${connectRedirectUri(config.api)}?${secrets.callbackQuery}`);
    // An OpenAPI document names no issuer, so a response's `iss` (RFC 9207) has nothing to be
    // held to: the code goes only to the pinned token URL of the app the state's link names.
    if (app.source === 'openapi') callbackUrl.searchParams.delete('iss');
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
      accountId = await learnAccountId(app, response, app.endpoints.apiBaseUrl);
    } catch (error) {
      if (!(error instanceof AccountUnverified)) throw error;
      // The tokens are dropped unused: without the account, a reconnect could not be checked.
      deps.logger.warn({ app: app.id, attemptId, error: error.message }, 'account not learned');
      return { ok: false, code: 'account_unverified' };
    }
    const providerScopes = scopesFrom(app, response, app.oauth.defaultScopes);
    const stored = await storeAuthorization(sql, config.encryption, context, {
      environmentId: context.environmentId,
      connectedUserId: context.connectedUserId,
      app: app.id,
      authConfigId: client.authConfigId,
      tokens: tokenSetFrom(app, response, now),
      grantedScopes:
        app.source === 'catalog'
          ? gradeScopes(app.definition, providerScopes)
          : OPENAPI_GRANTED_GRADES,
      providerScopes,
      accountId,
    });
    if (!stored.ok) return stored;
    if (stored.replacedId) {
      // Another account at the app is another connection: the old one was revoked.
      deps.logger.info(
        { app: app.id, attemptId, connectionId: stored.connection.id, revoked: stored.replacedId },
        'connection replaced by another account',
      );
    }
    return { ok: true, connectionId: stored.connection.id, linkId: context.linkId };
  };
}
