import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';
import type { CredentialScheme, CredentialSecret } from '../credentials/schemes.js';
import type { Connection } from './connections.js';

/**
 * Connections of kind `credential` (migration 037): the scheme the user entered the secret for,
 * and the secret sealed with the connection id as associated data, so a sealed secret copied to
 * another row does not open. They have no tokens, no refresh and no account id.
 */

const credentialAad = (id: string) => `connection:${id}:credential`;

const columns = (sql: Db) => sql`
  id, environment_id, connected_user_id, app, status, auth_kind, auth_config_id, granted_scopes,
  provider_scopes, access_token_expires_at, last_refreshed_at, refresh_count, last_used_at, created_at`;

export interface EnteredCredential {
  environmentId: string;
  connectedUserId: string;
  app: string;
  scheme: CredentialScheme;
  secret: CredentialSecret;
  /** The grades the connection allows, as an OAuth connection's granted scopes. */
  grantedScopes: string[];
}

export type CredentialSaved =
  { kind: 'saved'; connection: Connection; replaced: boolean } | { kind: 'connection_revoked' };

/**
 * Stores an entered credential. Run it in a transaction: the row it decides on is locked until
 * the credential is stored.
 * - A reconnect (`reconnectId`) replaces that connection's credential in place (same id, back to
 *   active); a connection revoked meanwhile is not revived.
 * - A new connect replaces the credential of the user's live connection to the app in place (a
 *   credential names no account to tell one from another, so the newest one entered is the one),
 *   whatever kind it was; with none, a new connection is made.
 * Whatever the connection held before (tokens, an older credential) is erased.
 */
export async function saveCredentialConnection(
  sql: Db,
  keyring: Keyring,
  input: EnteredCredential,
  reconnectId?: string,
): Promise<CredentialSaved> {
  if (input.secret.scheme !== input.scheme.scheme) {
    throw new Error(`a ${input.secret.scheme} secret for a ${input.scheme.scheme} scheme`);
  }
  if (reconnectId) {
    const [target]: [{ id: string; status: string }?] = await sql`
      select id, status from connections where id = ${reconnectId} for update`;
    if (!target || target.status === 'revoked') return { kind: 'connection_revoked' };
    return {
      kind: 'saved',
      connection: await replace(sql, keyring, target.id, input),
      replaced: true,
    };
  }
  const [live]: [{ id: string }?] = await sql`
    select id from connections
    where connected_user_id = ${input.connectedUserId} and app = ${input.app} and status <> 'revoked'
    for update`;
  if (live) {
    return {
      kind: 'saved',
      connection: await replace(sql, keyring, live.id, input),
      replaced: true,
    };
  }
  const id = uuidv7();
  const placement = placementOf(input.scheme);
  const [row]: [Connection?] = await sql`
    insert into connections (id, environment_id, connected_user_id, app, status, auth_kind,
      granted_scopes, provider_scopes, credential_scheme, credential_in, credential_name,
      credential_sealed)
    values (${id}, ${input.environmentId}, ${input.connectedUserId}, ${input.app}, 'active',
      'credential', ${input.grantedScopes}, '{}', ${input.scheme.scheme}, ${placement.in},
      ${placement.name}, ${sealSecret(keyring, id, input.secret)})
    returning ${columns(sql)}`;
  if (!row) throw new Error(`connection ${id} was not saved`);
  return { kind: 'saved', connection: row, replaced: false };
}

function placementOf(scheme: CredentialScheme): { in: string | null; name: string | null } {
  return scheme.scheme === 'api_key'
    ? { in: scheme.in, name: scheme.name }
    : { in: null, name: null };
}

function sealSecret(keyring: Keyring, id: string, secret: CredentialSecret): string {
  return seal(keyring, JSON.stringify(secret), credentialAad(id));
}

async function replace(
  sql: Db,
  keyring: Keyring,
  id: string,
  input: EnteredCredential,
): Promise<Connection> {
  const placement = placementOf(input.scheme);
  const [row]: [Connection?] = await sql`
    update connections set
      status = 'active', auth_kind = 'credential', auth_config_id = null,
      granted_scopes = ${input.grantedScopes}, provider_scopes = '{}',
      access_token_sealed = null, refresh_token_sealed = null, access_token_expires_at = null,
      account_id_sealed = null, credential_scheme = ${input.scheme.scheme},
      credential_in = ${placement.in}, credential_name = ${placement.name},
      credential_sealed = ${sealSecret(keyring, id, input.secret)}, updated_at = now()
    where id = ${id}
    returning ${columns(sql)}`;
  if (!row) throw new Error(`connection ${id} was not saved`);
  return row;
}

/** A credential connection's scheme and opened secret. */
export interface StoredCredential {
  scheme: CredentialScheme;
  secret: CredentialSecret;
}

/**
 * The connection's credential, opened; null when it holds none (not a credential connection, or
 * revoked). Call it only where the secret is used: the activity that sends the request, and token
 * export.
 */
export async function readCredential(
  sql: Db,
  keyring: Keyring,
  id: string,
): Promise<StoredCredential | null> {
  const [row]: [
    {
      credentialScheme: 'api_key' | 'bearer' | 'basic' | null;
      credentialIn: 'header' | 'query' | null;
      credentialName: string | null;
      credentialSealed: string | null;
    }?,
  ] = await sql`
    select credential_scheme, credential_in, credential_name, credential_sealed
    from connections where id = ${id} and auth_kind = 'credential'`;
  if (!row?.credentialSealed || !row.credentialScheme) return null;
  const secret = JSON.parse(
    open(keyring, row.credentialSealed, credentialAad(id)),
  ) as CredentialSecret;
  const scheme: CredentialScheme =
    row.credentialScheme === 'api_key'
      ? { scheme: 'api_key', in: row.credentialIn ?? 'header', name: row.credentialName ?? '' }
      : { scheme: row.credentialScheme };
  if (secret.scheme !== scheme.scheme) {
    throw new Error(
      `connection ${id} holds a ${secret.scheme} secret for a ${scheme.scheme} scheme`,
    );
  }
  return { scheme, secret };
}
