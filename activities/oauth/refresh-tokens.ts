import { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { isInvalidGrant, oauth, oauthConfiguration } from './client.js';
import { clientOfConnection } from './credentials.js';
import { appEndpoints } from './endpoints.js';
import { scopesFrom, tokenSetFrom } from './token-response.js';

function result(connection: Connection, refreshed: boolean): RefreshResult {
  return {
    connectionId: connection.id,
    status: connection.status,
    refreshed,
    lastRefreshedAt: connection.lastRefreshedAt?.toISOString() ?? null,
    accessTokenExpiresAt: connection.accessTokenExpiresAt?.toISOString() ?? null,
  };
}

/** About 11 s of tries in all, and never past the activity's own time limit. */
const SAVE_ATTEMPTS = 8;

/**
 * The new tokens exist only in this process until they are stored, and an app that rotates
 * refresh tokens has already spent the old one: were the activity to fail and be retried, it
 * would ask again with a dead refresh token and lose the grant. So the write is retried here.
 */
async function untilStored<T>(
  logger: Logger,
  connectionId: string,
  save: () => Promise<T>,
): Promise<T> {
  const { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs } = Context.current().info;
  // A second before the limit: past it Temporal would retry the whole activity.
  const deadline = currentAttemptScheduledTimestampMs + startToCloseTimeoutMs - 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await save();
    } catch (error) {
      const pause = Math.min(100 * 2 ** (attempt - 1), 5000);
      if (attempt >= SAVE_ATTEMPTS || Date.now() + pause > deadline) throw error;
      // The message only: a database error can carry the statement's (sealed) parameters.
      logger.warn(
        { connectionId, attempt, error: error instanceof Error ? error.message : 'unknown' },
        'storing refreshed tokens failed; trying again',
      );
      await sleep(pause);
    }
  }
}

/**
 * One token request for a connection. Runs inside the `refresh/<connection id>` workflow, so
 * concurrent callers share it; a caller whose request predates the last completed refresh is
 * served by that one. `invalid_grant` means the grant is dead: the connection becomes `expired`.
 * Other failures throw, and Temporal retries them.
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
    const servedByEarlier = connection.refreshCount > request.seenRefreshCount;
    if (servedByEarlier || (!request.force && !needsRefresh(connection.accessTokenExpiresAt, now)))
      return result(connection, false);

    const app = findApp(connection.app);
    const tokens = await readTokens(sql, config.encryption, connection.id);
    if (!app || !tokens?.refreshToken) {
      await markConnectionExpired(sql, connection.id);
      return { ...result(connection, false), status: 'expired' };
    }
    const configuration = oauthConfiguration(
      app,
      appEndpoints(app, config.apps.urls),
      await clientOfConnection(sql, config, connection),
    );
    try {
      const response = await oauth.refreshTokenGrant(configuration, tokens.refreshToken);
      const saved = await untilStored(deps.logger, connection.id, () =>
        saveRefreshedTokens(
          sql,
          config.encryption,
          connection.id,
          tokenSetFrom(app, response, now),
          typeof response.scope === 'string'
            ? scopesFrom(app, response, connection.providerScopes)
            : null,
        ),
      );
      if (saved) return result(saved, true);
      // Revoked or expired while the app answered: the new tokens are dropped with it.
      const current = await findConnectionById(sql, connection.id);
      return current ? result(current, false) : { ...result(connection, false), status: 'missing' };
    } catch (error) {
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
