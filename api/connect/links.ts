import {
  createConnectLink,
  findActiveReconnectLink,
  type ConnectLink,
} from '../../activities/db/connect-links.js';
import type { Connection } from '../../activities/db/connections.js';
import type { Config } from '../../infra/config.js';
import type { Db, Sql } from '../../infra/database/client.js';
import { ApiError } from '../errors.js';

/** A connect link lives one hour; a reconnect link seven days. Both are single use. */
export const CONNECT_LINK_TTL_SECONDS = 60 * 60;
export const RECONNECT_LINK_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface LinkView {
  id: string;
  url: string;
  expires_at: string;
}

export function connectUrl(config: Pick<Config, 'api'>, token: string): string {
  return `${config.api.publicUrl}/connect/${token}`;
}

function view(config: Pick<Config, 'api'>, link: ConnectLink, token: string): LinkView {
  return { id: link.id, url: connectUrl(config, token), expires_at: link.expiresAt.toISOString() };
}

export async function newConnectLink(
  sql: Db,
  config: Pick<Config, 'api' | 'encryption'>,
  input: { environmentId: string; connectedUserId: string; app: string; redirectUrl?: string },
): Promise<LinkView> {
  const { link, token } = await createConnectLink(sql, config.encryption, {
    ...input,
    purpose: 'connect',
    ttlSeconds: CONNECT_LINK_TTL_SECONDS,
  });
  return view(config, link, token);
}

/**
 * The connection's one active reconnect link: the same URL until it is used or expires, then a new
 * one. Completing it re-authorises this connection in place, with the account it was made with
 * (another account is refused). Concurrent askers (several calls meeting an expired connection at
 * once) are serialised per connection, so they all get the same link rather than one each.
 */
export async function reconnectLinkFor(
  sql: Sql,
  config: Pick<Config, 'api' | 'encryption'>,
  connection: Pick<Connection, 'id' | 'environmentId' | 'connectedUserId' | 'app'>,
): Promise<LinkView> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`reconnect-link:${connection.id}`}))`;
    const active = await findActiveReconnectLink(tx, config.encryption, connection.id);
    if (active) return view(config, active.link, active.token);
    const { link, token } = await createConnectLink(tx, config.encryption, {
      environmentId: connection.environmentId,
      connectedUserId: connection.connectedUserId,
      app: connection.app,
      purpose: 'reconnect',
      connectionId: connection.id,
      ttlSeconds: RECONNECT_LINK_TTL_SECONDS,
    });
    return view(config, link, token);
  });
}

/**
 * `connection_expired` with the connection's reconnect link, for every route that meets an expired
 * connection: its own endpoints and the calls that need it.
 */
export async function connectionExpiredError(
  sql: Sql,
  config: Pick<Config, 'api' | 'encryption'>,
  connection: Pick<Connection, 'id' | 'environmentId' | 'connectedUserId' | 'app'>,
): Promise<ApiError> {
  const link = await reconnectLinkFor(sql, config, connection);
  return new ApiError(
    'connection_expired',
    `The connection to ${connection.app} has expired: the user must reconnect through reconnect_url.`,
    { connection_id: connection.id, reconnect_url: link.url },
  );
}
