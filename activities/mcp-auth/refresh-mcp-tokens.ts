import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  InvalidClientError,
  InvalidGrantError,
  UnauthorizedClientError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import type { RefreshResult } from '../../workflows/connection-types.js';
import {
  findConnectionById,
  markConnectionExpired,
  readTokens,
  saveRefreshedTokens,
  type Connection,
} from '../db/connections.js';
import type { McpConnectionAuth } from '../db/mcp-authorizations.js';
import { markRegistrationRefused } from '../db/mcp-client-registrations.js';
import { connectRedirectUri } from '../oauth/redirect-uri.js';
import { untilStored } from '../oauth/until-stored.js';
import { authFetch } from './auth-fetch.js';
import { tokenSetOf } from './exchange-mcp-code.js';
import { GatehouseOAuthProvider, McpClientRefused } from './provider.js';
import { clientForRecord, isGone } from './provider-client.js';

function resultOf(connection: Connection, refreshed: boolean): RefreshResult {
  return {
    connectionId: connection.id,
    status: connection.status,
    refreshed,
    lastRefreshedAt: connection.lastRefreshedAt?.toISOString() ?? null,
    accessTokenExpiresAt: connection.accessTokenExpiresAt?.toISOString() ?? null,
  };
}

/**
 * One refresh of an MCP app's connection, inside its `refresh/<connection id>`
 * workflow like every other: the SDK's `refreshAuthorization` at the authorization server it was
 * authorised with, with its resource indicator and the client that made it. A retired BYO
 * client, a refused registration, no refresh token or `invalid_grant` leave the grant dead: the
 * connection expires (callers then hand out its reconnect link, which uses the client selected
 * then). A BYO client refused as `invalid_client` leaves the connection as it is and says so.
 */
export async function refreshMcpTokens(
  deps: { sql: Sql; config: Config; logger: Logger },
  connection: Connection,
  authorization: McpConnectionAuth,
): Promise<RefreshResult> {
  const { sql, config, logger } = deps;
  const log = { connectionId: connection.id, app: connection.app };
  const expire = async (why: string): Promise<RefreshResult> => {
    logger.info({ ...log, why }, 'MCP connection expired');
    await markConnectionExpired(sql, connection.id);
    return { ...resultOf(connection, false), status: 'expired' };
  };
  const client = await clientForRecord(deps, connection.environmentId, authorization);
  if (isGone(client)) {
    return expire(
      {
        retired: 'its MCP OAuth client was retired',
        refused: 'its registration was refused',
        elsewhere:
          'its MCP OAuth client belongs to another issuer than the one it was authorised at',
      }[client.gone],
    );
  }
  const tokens = await readTokens(sql, config.encryption, connection.id);
  if (!tokens?.refreshToken) return expire('no refresh token');
  const provider = new GatehouseOAuthProvider({
    phase: 'refresh',
    redirectUrl: connectRedirectUri(config.api),
    discovery: authorization.discovery,
    client,
    registrationRefused: (id) => markRegistrationRefused(sql, id),
  });
  const clientInformation = provider.clientInformation();
  if (!clientInformation) throw new Error(`connection ${connection.id} has no client to present`);
  const now = new Date();
  let answer;
  try {
    answer = await refreshAuthorization(authorization.issuer, {
      ...(authorization.discovery.authorizationServerMetadata
        ? { metadata: authorization.discovery.authorizationServerMetadata }
        : {}),
      clientInformation,
      refreshToken: tokens.refreshToken,
      ...(authorization.resource === null ? {} : { resource: authorization.resource }),
      ...(provider.addClientAuthentication
        ? { addClientAuthentication: provider.addClientAuthentication }
        : {}),
      fetchFn: authFetch(config),
    });
  } catch (error) {
    if (error instanceof InvalidGrantError) return expire('refresh token rejected');
    if (!(error instanceof InvalidClientError || error instanceof UnauthorizedClientError)) {
      throw error;
    }
    if (client.kind === 'byo') {
      const refused = new McpClientRefused(
        client.credentials.id,
        client.credentials.clientId,
        authorization.issuer,
      );
      logger.warn({ ...log, error: refused.message }, 'MCP OAuth client refused');
      return {
        ...resultOf(connection, false),
        status: 'unavailable',
        refusedClient: {
          mcpOAuthClientId: client.credentials.id,
          clientId: client.credentials.clientId,
        },
      };
    }
    // A registration the server no longer knows: the next connect registers anew, once.
    await provider.invalidateCredentials('client');
    return expire('its client was refused (invalid_client)');
  }
  // Before the write's retries: a malformed answer (a negative expires_in) is not a failed write.
  const tokenSet = tokenSetOf(answer, now);
  const saved = await untilStored(logger, connection.id, () =>
    saveRefreshedTokens(
      sql,
      config.encryption,
      connection.id,
      tokenSet,
      typeof answer.scope === 'string' ? answer.scope.split(' ').filter(Boolean) : null,
    ),
  );
  if (saved) return resultOf(saved, true);
  // Revoked or expired while the server answered: the new tokens are dropped with it.
  const current = await findConnectionById(sql, connection.id);
  return current ? resultOf(current, false) : { ...resultOf(connection, false), status: 'missing' };
}
