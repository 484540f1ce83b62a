import type { Keyring } from '../../infra/encryption.js';
import type { Db, Sql } from '../../infra/database/client.js';
import { consumeLink } from '../db/connect-links.js';
import {
  authorizeConnection,
  type AuthorizedConnection,
  type Connection,
} from '../db/connections.js';

/** What a connect attempt belongs to: its link, the user, the app and, for a reconnect, the connection. */
export interface AttemptContext {
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

export async function attemptContext(sql: Sql, attemptId: string): Promise<AttemptContext | null> {
  const [row]: [AttemptContext?] = await sql`
    select l.id as link_id, l.environment_id, l.connected_user_id, l.app, l.purpose, l.connection_id,
           l.used_at as link_used_at, l.expires_at as link_expires_at, a.expires_at as attempt_expires_at
    from oauth_attempts a join connect_links l on l.id = a.link_id
    where a.id = ${attemptId}`;
  return row ?? null;
}

/** Rolls the transaction back (the link stays unused) and says why. */
class NotStored extends Error {
  constructor(readonly code: 'link_used' | 'account_mismatch' | 'connection_revoked') {
    super(code);
  }
}

export type Stored =
  | { ok: true; connection: Connection; replacedId: string | null }
  | { ok: false; code: 'link_used' | 'account_mismatch' | 'connection_revoked' };

/**
 * Stores a completed authorization and consumes the single-use link in one transaction; a
 * reconnect that brought another account stores nothing and leaves the link usable. `alongside`
 * writes what belongs with the connection (an MCP app's client) in the same transaction.
 */
export async function storeAuthorization(
  sql: Sql,
  keyring: Keyring,
  context: AttemptContext,
  input: AuthorizedConnection,
  alongside?: (tx: Db, connection: Connection) => Promise<void>,
): Promise<Stored> {
  try {
    return await sql.begin(async (tx) => {
      if (!(await consumeLink(tx, context.linkId))) throw new NotStored('link_used');
      const authorization = await authorizeConnection(
        tx,
        keyring,
        input,
        context.purpose === 'reconnect' ? (context.connectionId ?? undefined) : undefined,
      );
      // Rolled back with the link: the user may come back with the right account.
      if (authorization.kind !== 'saved') throw new NotStored(authorization.kind);
      await alongside?.(tx, authorization.connection);
      return {
        ok: true as const,
        connection: authorization.connection,
        replacedId: authorization.replacedId,
      };
    });
  } catch (error) {
    if (error instanceof NotStored) return { ok: false, code: error.code };
    throw error;
  }
}
