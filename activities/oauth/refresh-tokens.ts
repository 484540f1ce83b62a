import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { findApp } from '../../workflows/catalog/index.js';
import {
  needsRefresh,
  type RefreshRequest,
  type RefreshResult,
} from '../../workflows/connection-types.js';
import {
  findConnectionById,
  markConnectionExpired,
  readTokens,
  saveRefreshedTokens,
  type Connection,
} from '../db/connections.js';
import { findConnectionAuthorization } from '../db/mcp-authorizations.js';
import { refreshMcpTokens } from '../mcp-auth/refresh-mcp-tokens.js';
import { isInvalidGrant, oauth } from './client.js';
import { clientOfConnection } from './credentials.js';
import { configurationFor, findOAuthApp } from './oauth-app.js';
import { scopesFrom, tokenSetFrom } from './token-response.js';
import { untilStored } from './until-stored.js';
import { tokenRefreshes } from '../../infra/telemetry/metrics.js';

function result(connection: Connection, refreshed: boolean): RefreshResult {
  return {
    connectionId: connection.id,
    status: connection.status,
    refreshed,
    lastRefreshedAt: connection.lastRefreshedAt?.toISOString() ?? null,
    accessTokenExpiresAt: connection.accessTokenExpiresAt?.toISOString() ?? null,
  };
}

/**
 * One token request for a connection. Runs inside the `refresh/<connection id>` workflow, so
 * concurrent callers share it; a caller whose request predates the last completed refresh is
 * served by that one. `invalid_grant` means the grant is dead: the connection becomes `expired`.
 * Other failures throw, and Temporal retries them. A remote MCP app's connection is refreshed
 * by refresh-mcp-tokens.ts, in this same activity and workflow; an OpenAPI app's here, at its
 * accepted document's refresh URL (else its token URL), read at each refresh (oauth-app.ts).
 */
export function refreshTokensActivity(deps: { sql: Sql; config: Config; logger: Logger }) {
  return async (request: RefreshRequest): Promise<RefreshResult> => {
    const { sql, config } = deps;
    const connection = await findConnectionById(sql, request.connectionId);
    if (!connection) {
      return {
        connectionId: request.connectionId,
        status: 'missing',
        refreshed: false,
        lastRefreshedAt: null,
        accessTokenExpiresAt: null,
      };
    }
    const now = new Date();
    if (connection.status !== 'active') return result(connection, false);
    // A credential the user entered has nothing to refresh: it stays as entered, and active.
    if (connection.authKind === 'credential') return result(connection, false);
    const servedByEarlier = connection.refreshCount > request.seenRefreshCount;
    if (servedByEarlier || (!request.force && !needsRefresh(connection.accessTokenExpiresAt, now)))
      return result(connection, false);

    // A remote MCP app's connection refreshes through the SDK, with its own client.
    const mcp = findApp(connection.app)
      ? null
      : await findConnectionAuthorization(sql, connection.id);
    if (mcp) return refreshMcpTokens(deps, connection, mcp);
    const found = await findOAuthApp(sql, config, connection.environmentId, connection.app);
    if (found && 'refused' in found) {
      // An OpenAPI app whose accepted document no longer allows this flow or its URLs: nothing
      // is sent, and the connection stays as it is until the operator sets it right.
      throw ApplicationFailure.nonRetryable(
        `${connection.app} cannot be refreshed: ${found.refused}`,
        'OAuthAppRefused',
      );
    }
    const app = found?.app;
    const tokens = await readTokens(sql, config.encryption, connection.id);
    if (!app || !tokens?.refreshToken) {
      await markConnectionExpired(sql, connection.id);
      return { ...result(connection, false), status: 'expired' };
    }
    const configuration = configurationFor(
      app,
      await clientOfConnection(sql, config, connection),
      config,
      { grant: 'refresh' },
    );
    try {
      const response = await oauth.refreshTokenGrant(configuration, tokens.refreshToken);
      const tokenSet = tokenSetFrom(app, response, now);
      const saved = await untilStored(deps.logger, connection.id, () =>
        saveRefreshedTokens(
          sql,
          config.encryption,
          connection.id,
          tokenSet,
          typeof response.scope === 'string'
            ? scopesFrom(app, response, connection.providerScopes)
            : null,
        ),
      );
      tokenRefreshes.inc({ app: app.id, outcome: 'refreshed' });
      if (saved) return result(saved, true);
      // Revoked or expired while the app answered: the new tokens are dropped with it.
      const current = await findConnectionById(sql, connection.id);
      return current ? result(current, false) : { ...result(connection, false), status: 'missing' };
    } catch (error) {
      // Failed: Temporal tries again. Revoked: the user must connect again.
      tokenRefreshes.inc({ app: app.id, outcome: isInvalidGrant(error) ? 'revoked' : 'failed' });
      if (!isInvalidGrant(error)) throw error;
      deps.logger.info(
        { connectionId: connection.id, app: app.id },
        'refresh token rejected; connection expired',
      );
      await markConnectionExpired(sql, connection.id);
      return { ...result(connection, false), status: 'expired' };
    }
  };
}
