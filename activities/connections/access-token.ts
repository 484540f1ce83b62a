import type { Client } from '@temporalio/client';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { needsRefresh, type RefreshResult } from '../../workflows/connection-types.js';
import { readAccessTokenState, readTokens } from '../db/connections.js';
import { refreshThroughWorkflow } from './refresh-workflow.js';

export type AccessTokenResult =
  /** `usedRecently`: the connection's last use is under a minute old (nothing to record). */
  | { ok: true; accessToken: string; usedRecently?: boolean }
  | {
      ok: false;
      status: 'expired' | 'revoked' | 'missing' | 'unavailable';
      /** With `unavailable`: the server refused the operator's MCP OAuth client. */
      refusedClient?: RefreshResult['refusedClient'];
    };

export interface AccessTokenDeps {
  sql: Sql;
  config: Pick<Config, 'encryption' | 'temporal'>;
  temporal: Client;
}

/**
 * A valid access token for a connection, for activities that call the app: the stored one while
 * it has more than 60 s to live, else one from a refresh shared through `refresh/<id>`. `force`
 * is for the app having answered 401 to a token we thought valid.
 */
export async function validAccessToken(
  deps: AccessTokenDeps,
  connectionId: string,
  options: { force?: boolean } = {},
): Promise<AccessTokenResult> {
  const connection = await readAccessTokenState(deps.sql, deps.config.encryption, connectionId);
  if (!connection) return { ok: false, status: 'missing' };
  if (connection.status !== 'active') return { ok: false, status: connection.status };
  const fresh = !options.force && !needsRefresh(connection.accessTokenExpiresAt, new Date());
  // The common case: one read, no refresh.
  if (fresh && connection.accessToken) {
    return { ok: true, accessToken: connection.accessToken, usedRecently: connection.usedRecently };
  }
  if (!fresh) {
    const refreshed = await refreshThroughWorkflow(deps.temporal, deps.config.temporal.taskQueue, {
      connectionId,
      seenRefreshCount: connection.refreshCount,
      force: options.force ?? false,
    });
    if (refreshed.status !== 'active') {
      return {
        ok: false,
        status: refreshed.status,
        ...(refreshed.refusedClient ? { refusedClient: refreshed.refusedClient } : {}),
      };
    }
  }
  const tokens = await readTokens(deps.sql, deps.config.encryption, connectionId);
  return tokens ? { ok: true, accessToken: tokens.accessToken } : { ok: false, status: 'expired' };
}
