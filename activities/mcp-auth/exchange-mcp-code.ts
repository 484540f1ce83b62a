import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import type { ConnectOutcome } from '../../workflows/connection-types.js';
import type { TokenSet } from '../db/connections.js';
import {
  saveConnectionAuthorization,
  type McpAttemptAuthorization,
} from '../db/mcp-authorizations.js';
import { markRegistrationRefused } from '../db/mcp-client-registrations.js';
import { connectRedirectUri } from '../oauth/redirect-uri.js';
import { storeAuthorization, type AttemptContext } from '../oauth/store-authorization.js';
import { InvalidTokenLifetime, accessTokenExpiresAt } from '../oauth/token-lifetime.js';
import { authFetch } from './auth-fetch.js';
import { GatehouseOAuthProvider } from './provider.js';
import { clientForRecord, isGone } from './provider-client.js';
import { responseIssuerRefusal } from './response-issuer.js';

/**
 * The grades an MCP connection's token allows: all of them. A remote server's scopes do not say
 * which tools they cover; each tool is graded on its own and the server decides each call.
 */
export const MCP_GRANTED_GRADES = ['read', 'write'];

/**
 * The SDK's token answer as a connection stores it; no `expires_in`, no known expiry. Throws
 * InvalidTokenLifetime for a negative one, which the SDK's parser lets through.
 */
export function tokenSetOf(tokens: OAuthTokens, now: Date): TokenSet {
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
    expiresAt: accessTokenExpiresAt(tokens.expires_in, now, null),
  };
}

/**
 * The callback's code exchanged by the SDK's `auth()`, at the authorization server the attempt
 * was started with (its discovery state), with the client it presented (a BYO client's secret
 * as it is now), the same resource indicator and the PKCE verifier. The connection stores the
 * tokens sealed and remembers the client and resource, in the transaction that spends the link.
 * First, the response must name that server in `iss` (RFC 9207, response-issuer.ts): a code
 * from another issuer is never sent anywhere.
 */
export async function exchangeMcpCode(
  deps: { sql: Sql; config: Config; logger: Logger },
  input: {
    attemptId: string;
    context: AttemptContext;
    secrets: { codeVerifier: string; callbackQuery: string };
    authorization: McpAttemptAuthorization;
  },
): Promise<ConnectOutcome> {
  const { sql, config, logger } = deps;
  const { context, authorization } = input;
  const log = { app: context.app, attemptId: input.attemptId };
  const response = new URLSearchParams(input.secrets.callbackQuery);
  const refusal = responseIssuerRefusal(authorization.responseIssuer, response);
  if (refusal) {
    logger.warn({ ...log, ...refusal }, 'MCP authorization response refused: iss (RFC 9207)');
    return { ok: false, code: 'response_issuer_mismatch' };
  }
  const code = response.get('code');
  const client = await clientForRecord(deps, context.environmentId, authorization);
  if (!code || isGone(client)) {
    logger.warn(
      { ...log, gone: isGone(client) ? client : null },
      'MCP code exchange not attempted',
    );
    return { ok: false, code: 'exchange_failed' };
  }
  const now = new Date();
  const provider = new GatehouseOAuthProvider({
    phase: 'exchange',
    redirectUrl: connectRedirectUri(config.api),
    discovery: authorization.discovery,
    client,
    codeVerifier: input.secrets.codeVerifier,
    registrationRefused: (id) => markRegistrationRefused(sql, id),
  });
  try {
    await auth(provider, {
      serverUrl: authorization.serverUrl,
      authorizationCode: code,
      fetchFn: authFetch(config),
    });
  } catch (error) {
    // A refused BYO client's message names it, for the operator; the user sees a branded page.
    logger.warn(
      { ...log, error: error instanceof Error ? error.message : 'unknown' },
      'MCP authorization code exchange failed',
    );
    return { ok: false, code: 'exchange_failed' };
  }
  const tokens = provider.savedTokens;
  if (!tokens) throw new Error('the SDK authorised without tokens');
  let tokenSet;
  try {
    tokenSet = tokenSetOf(tokens, now);
  } catch (error) {
    if (!(error instanceof InvalidTokenLifetime)) throw error;
    // Malformed, as openid-client refuses it for catalog apps: the same page, nothing stored.
    logger.warn({ ...log, error: error.message }, 'MCP authorization code exchange failed');
    return { ok: false, code: 'exchange_failed' };
  }
  const providerScopes = (tokens.scope ?? authorization.scope ?? '').split(' ').filter(Boolean);
  const stored = await storeAuthorization(
    sql,
    config.encryption,
    context,
    {
      environmentId: context.environmentId,
      connectedUserId: context.connectedUserId,
      app: context.app,
      authConfigId: null,
      tokens: tokenSet,
      grantedScopes: MCP_GRANTED_GRADES,
      providerScopes,
      // A remote server says nothing stable about the account: re-authorised in place.
      accountId: null,
    },
    (tx, connection) => saveConnectionAuthorization(tx, connection.id, authorization),
  );
  if (!stored.ok) return stored;
  return { ok: true, connectionId: stored.connection.id, linkId: context.linkId };
}
