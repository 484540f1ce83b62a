import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

export type ConnectionStatus = 'active' | 'expired' | 'revoked';

export interface Connection {
  id: string;
  environmentId: string;
  connectedUserId: string;
  app: string;
  status: ConnectionStatus;
  /** `credential`: a secret the user entered (credential-connections.ts), no tokens. */
  authKind: 'oauth2' | 'credential';
  authConfigId: string | null;
  grantedScopes: string[];
  providerScopes: string[];
  accessTokenExpiresAt: Date | null;
  lastRefreshedAt: Date | null;
  refreshCount: number;
  lastUsedAt: Date | null;
  createdAt: Date;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

const columns = (sql: Db) => sql`
  id, environment_id, connected_user_id, app, status, auth_kind, auth_config_id, granted_scopes,
  provider_scopes, access_token_expires_at, last_refreshed_at, refresh_count, last_used_at, created_at`;

// Tokens are bound to their connection: a sealed token copied to another row does not open.
const accessAad = (id: string) => `connection:${id}:access_token`;
const refreshAad = (id: string) => `connection:${id}:refresh_token`;

export interface AuthorizedConnection {
  environmentId: string;
  connectedUserId: string;
  app: string;
  authConfigId: string | null;
  tokens: TokenSet;
  grantedScopes: string[];
  providerScopes: string[];
  /** The app's stable id of the account (workflows/catalog AccountIdentity); null: unknown. */
  accountId?: string | null;
}

export type Authorization =
  | { kind: 'saved'; connection: Connection; replacedId: string | null }
  | { kind: 'account_mismatch' }
  | { kind: 'connection_revoked' };

const accountAad = (id: string) => `connection:${id}:account_id`;

/** What the decision of `authorizeConnection` reads of an existing connection. */
interface Standing {
  id: string;
  status: ConnectionStatus;
  accountIdSealed: string | null;
}

/** An unknown account on either side cannot be told apart, so it is not a mismatch. */
function sameAccount(keyring: Keyring, row: Standing, accountId: string | null): boolean {
  if (!row.accountIdSealed || accountId === null) return true;
  return open(keyring, row.accountIdSealed, accountAad(row.id)) === accountId;
}

/**
 * Stores the outcome of a completed authorization. Run it in a transaction: the rows
 * it decides on are locked until the decision is stored.
 * - A reconnect (`reconnectId`) renews that connection in place (same id, back to active,
 *   counters kept), but only with the account it was made with: another account changes
 *   nothing (`account_mismatch`), and a connection revoked meanwhile is not revived.
 * - A new connect re-authorises the user's live connection to the app in place when the account
 *   is the same; another account is another connection: the old one is revoked (tokens erased,
 *   row kept for audit) and a new one is made (`replacedId` names the old one).
 * Where the account is unknown (the app's catalog entry cannot tell it, or the connection was made
 * before accounts were recorded), it is re-authorised in place as before, and an account learned
 * now is kept.
 */
export async function authorizeConnection(
  sql: Db,
  keyring: Keyring,
  input: AuthorizedConnection,
  reconnectId?: string,
): Promise<Authorization> {
  const accountId = input.accountId ?? null;
  if (reconnectId) {
    const [target]: [Standing?] = await sql`
      select id, status, account_id_sealed from connections where id = ${reconnectId} for update`;
    if (!target || target.status === 'revoked') return { kind: 'connection_revoked' };
    if (!sameAccount(keyring, target, accountId)) return { kind: 'account_mismatch' };
    return {
      kind: 'saved',
      connection: await reauthorize(sql, keyring, target.id, input),
      replacedId: null,
    };
  }
  const [live]: [Standing?] = await sql`
    select id, status, account_id_sealed from connections
    where connected_user_id = ${input.connectedUserId} and app = ${input.app} and status <> 'revoked'
    for update`;
  if (live && sameAccount(keyring, live, accountId)) {
    return {
      kind: 'saved',
      connection: await reauthorize(sql, keyring, live.id, input),
      replacedId: null,
    };
  }
  // One live connection per user and app: the old account's goes before the new one is made.
  if (live) await markConnectionRevoked(sql, live.id);
  return {
    kind: 'saved',
    connection: await insertConnection(sql, keyring, input),
    replacedId: live?.id ?? null,
  };
}

/**
 * `authorizeConnection` for callers that expect a connection (test fixtures): a refusal throws.
 */
export async function saveAuthorizedConnection(
  sql: Db,
  keyring: Keyring,
  input: AuthorizedConnection,
  reauthorizeId?: string,
): Promise<Connection> {
  const outcome = await authorizeConnection(sql, keyring, input, reauthorizeId);
  if (outcome.kind !== 'saved') throw new Error(`connection not saved: ${outcome.kind}`);
  return outcome.connection;
}

function sealedTokens(keyring: Keyring, id: string, input: AuthorizedConnection) {
  return {
    access: seal(keyring, input.tokens.accessToken, accessAad(id)),
    refresh: input.tokens.refreshToken
      ? seal(keyring, input.tokens.refreshToken, refreshAad(id))
      : null,
    account: input.accountId ? seal(keyring, input.accountId, accountAad(id)) : null,
  };
}

async function reauthorize(
  sql: Db,
  keyring: Keyring,
  id: string,
  input: AuthorizedConnection,
): Promise<Connection> {
  const sealed = sealedTokens(keyring, id, input);
  const [row]: [Connection?] = await sql`
    update connections set
      status = 'active', auth_config_id = ${input.authConfigId}, granted_scopes = ${input.grantedScopes},
      provider_scopes = ${input.providerScopes}, access_token_sealed = ${sealed.access},
      refresh_token_sealed = ${sealed.refresh}, access_token_expires_at = ${input.tokens.expiresAt},
      account_id_sealed = coalesce(${sealed.account}, account_id_sealed), updated_at = now()
    where id = ${id}
    returning ${columns(sql)}`;
  if (!row) throw new Error(`connection ${id} was not saved`);
  return row;
}

async function insertConnection(
  sql: Db,
  keyring: Keyring,
  input: AuthorizedConnection,
): Promise<Connection> {
  const id = uuidv7();
  const sealed = sealedTokens(keyring, id, input);
  const [row]: [Connection?] = await sql`
    insert into connections (id, environment_id, connected_user_id, app, status, auth_config_id,
      granted_scopes, provider_scopes, access_token_sealed, refresh_token_sealed, access_token_expires_at,
      account_id_sealed)
    values (${id}, ${input.environmentId}, ${input.connectedUserId}, ${input.app}, 'active', ${input.authConfigId},
      ${input.grantedScopes}, ${input.providerScopes}, ${sealed.access}, ${sealed.refresh}, ${input.tokens.expiresAt},
      ${sealed.account})
    returning ${columns(sql)}`;
  if (!row) throw new Error(`connection ${id} was not saved`);
  return row;
}

export async function findConnection(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<Connection | null> {
  const [row]: [Connection?] = await sql`
    select ${columns(sql)} from connections where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}

export async function findConnectionById(sql: Db, id: string): Promise<Connection | null> {
  const [row]: [Connection?] = await sql`select ${columns(sql)} from connections where id = ${id}`;
  return row ?? null;
}

/** The connections a user still has (revoked ones are history). */
export async function listUserConnections(sql: Db, connectedUserId: string): Promise<Connection[]> {
  return sql<Connection[]>`
    select ${columns(sql)} from connections
    where connected_user_id = ${connectedUserId} and status <> 'revoked'
    order by created_at`;
}

/**
 * Every connection of these users, revoked ones too (the console shows a connection's history),
 * each user's oldest first.
 */
export async function listConnectionsOfUsers(
  sql: Db,
  environmentId: string,
  connectedUserIds: readonly string[],
): Promise<Connection[]> {
  if (connectedUserIds.length === 0) return [];
  return sql<Connection[]>`
    select ${columns(sql)} from connections
    where environment_id = ${environmentId}
      and connected_user_id = any(${[...connectedUserIds]}::uuid[])
    order by connected_user_id, created_at, id`;
}

export async function readTokens(sql: Db, keyring: Keyring, id: string): Promise<TokenSet | null> {
  const [row]: [
    {
      accessTokenSealed: string | null;
      refreshTokenSealed: string | null;
      accessTokenExpiresAt: Date | null;
    }?,
  ] = await sql`
      select access_token_sealed, refresh_token_sealed, access_token_expires_at from connections where id = ${id}`;
  if (!row?.accessTokenSealed) return null;
  return {
    accessToken: open(keyring, row.accessTokenSealed, accessAad(id)),
    refreshToken: row.refreshTokenSealed
      ? open(keyring, row.refreshTokenSealed, refreshAad(id))
      : null,
    expiresAt: row.accessTokenExpiresAt,
  };
}

/**
 * Stores a refresh's outcome in one statement: the new access token and, when the app rotated
 * it, the new refresh token. Losing a rotated refresh token would kill the connection.
 */
export async function saveRefreshedTokens(
  sql: Db,
  keyring: Keyring,
  id: string,
  tokens: TokenSet,
  providerScopes: string[] | null,
): Promise<Connection | null> {
  const refresh = tokens.refreshToken ? seal(keyring, tokens.refreshToken, refreshAad(id)) : null;
  const [row]: [Connection?] = await sql`
    update connections set
      access_token_sealed = ${seal(keyring, tokens.accessToken, accessAad(id))},
      refresh_token_sealed = coalesce(${refresh}, refresh_token_sealed),
      access_token_expires_at = ${tokens.expiresAt},
      provider_scopes = coalesce(${providerScopes}, provider_scopes),
      last_refreshed_at = now(), refresh_count = refresh_count + 1, updated_at = now()
    where id = ${id} and status = 'active'
    returning ${columns(sql)}`;
  // Null: revoked or expired meanwhile, and the new tokens are not kept.
  return row ?? null;
}

export async function markConnectionExpired(sql: Db, id: string): Promise<void> {
  await sql`update connections set status = 'expired', updated_at = now() where id = ${id} and status = 'active'`;
}

/** Revoked connections keep their row (history) but lose their tokens or entered credential. */
export async function markConnectionRevoked(sql: Db, id: string): Promise<Connection | null> {
  const [row]: [Connection?] = await sql`
    update connections set status = 'revoked', access_token_sealed = null, refresh_token_sealed = null,
      credential_sealed = null, revoked_at = coalesce(revoked_at, now()), updated_at = now()
    where id = ${id}
    returning ${columns(sql)}`;
  return row ?? null;
}

/**
 * `last_used_at` of the user's connection list: the last call that reached the app, to the
 * minute. A busy connection is written at most once a minute rather than on every call.
 */
export async function markConnectionUsed(sql: Db, id: string): Promise<void> {
  await sql`
    update connections set last_used_at = now()
    where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
}

export interface AccessTokenState {
  status: ConnectionStatus;
  accessTokenExpiresAt: Date | null;
  refreshCount: number;
  /** Opened access token; null when the connection holds none. */
  accessToken: string | null;
  /** `last_used_at` is under a minute old: markConnectionUsed would change nothing. */
  usedRecently: boolean;
}

/** What a call needs of a connection before it uses the token, in one read. */
export async function readAccessTokenState(
  sql: Db,
  keyring: Keyring,
  id: string,
): Promise<AccessTokenState | null> {
  const [row]: [
    {
      status: ConnectionStatus;
      accessTokenExpiresAt: Date | null;
      refreshCount: number;
      accessTokenSealed: string | null;
      usedRecently: boolean;
    }?,
  ] = await sql`
    select status, access_token_expires_at, refresh_count, access_token_sealed,
      coalesce(last_used_at >= now() - interval '1 minute', false) as used_recently
    from connections where id = ${id}`;
  if (!row) return null;
  return {
    status: row.status,
    accessTokenExpiresAt: row.accessTokenExpiresAt,
    refreshCount: row.refreshCount,
    accessToken: row.accessTokenSealed ? open(keyring, row.accessTokenSealed, accessAad(id)) : null,
    usedRecently: row.usedRecently,
  };
}
