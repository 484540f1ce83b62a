import type { Sql } from '../../infra/database/client.js';
import type { Keyring } from '../../infra/encryption.js';
import { consumeLink, type ConnectLink } from '../db/connect-links.js';
import type { Connection } from '../db/connections.js';
import { saveCredentialConnection } from '../db/credential-connections.js';
import type { CredentialScheme, CredentialSecret } from './schemes.js';

/**
 * The grades a credential connection allows: all of them, as an MCP connection's. A key or a
 * password says nothing of what it covers; each action is graded on its own, policy decides each
 * call, and the app refuses what the credential may not do.
 */
export const CREDENTIAL_GRANTED_GRADES = ['read', 'write'];

/** Rolls the transaction back (the link stays unused) and says why. */
class NotStored extends Error {
  constructor(readonly code: 'link_used' | 'connection_revoked') {
    super(code);
  }
}

export type CredentialStored =
  | { ok: true; connection: Connection; replaced: boolean }
  | { ok: false; code: 'link_used' | 'connection_revoked' };

/**
 * Stores a credential entered through a connect link and consumes the single-use link, in one
 * transaction. Done where the form is posted, not in a workflow: nothing is asked of the app, and
 * the secret must never be a Temporal payload. A reconnect link replaces its connection's
 * credential (a revoked one is not revived, and the link stays usable for nothing).
 */
export async function storeEnteredCredential(
  sql: Sql,
  keyring: Keyring,
  link: Pick<
    ConnectLink,
    'id' | 'environmentId' | 'connectedUserId' | 'app' | 'purpose' | 'connectionId'
  >,
  scheme: CredentialScheme,
  secret: CredentialSecret,
): Promise<CredentialStored> {
  try {
    return await sql.begin(async (tx) => {
      if (!(await consumeLink(tx, link.id))) throw new NotStored('link_used');
      const saved = await saveCredentialConnection(
        tx,
        keyring,
        {
          environmentId: link.environmentId,
          connectedUserId: link.connectedUserId,
          app: link.app,
          scheme,
          secret,
          grantedScopes: CREDENTIAL_GRANTED_GRADES,
        },
        link.purpose === 'reconnect' ? (link.connectionId ?? undefined) : undefined,
      );
      if (saved.kind !== 'saved') throw new NotStored(saved.kind);
      return { ok: true as const, connection: saved.connection, replaced: saved.replaced };
    });
  } catch (error) {
    if (error instanceof NotStored) return { ok: false, code: error.code };
    throw error;
  }
}
