import postgres from 'postgres';
import { v7 as uuidv7 } from 'uuid';
import type { Db, Sql } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

export const MCP_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type McpAuthMethod = (typeof MCP_AUTH_METHODS)[number];

/** An MCP OAuth client as the API may show it: the secret itself never leaves this module. */
export interface McpOAuthClient {
  id: string;
  app: string;
  issuer: string;
  clientId: string;
  authMethod: McpAuthMethod;
  source: 'byo';
  status: 'active' | 'retired';
  selected: boolean;
  clientSecretHint: string | null;
  createdAt: Date;
  updatedAt: Date;
  rotatedAt: Date | null;
  retiredAt: Date | null;
}

export interface NewMcpOAuthClient {
  environmentId: string;
  app: string;
  issuer: string;
  clientId: string;
  /** Required by the `client_secret_*` methods, refused with `none` (checked by the caller). */
  clientSecret?: string | undefined;
  authMethod: McpAuthMethod;
  source: 'byo';
}

/**
 * Why a change was refused: `retired` clients cannot change; a `public` client (`none`) has no
 * secret to rotate; `duplicate` means the app already has an active client with that issuer and
 * client id.
 */
export type McpOAuthClientRefusal = 'not_found' | 'retired' | 'public' | 'duplicate';

export type McpOAuthClientChange =
  { ok: true; client: McpOAuthClient } | { ok: false; reason: McpOAuthClientRefusal };

// The row id binds the sealed secret: a value copied to another row does not open.
const secretAad = (id: string) => `mcp_oauth_client:${id}:client_secret`;

/**
 * Four characters of a short secret are a large part of it, so short secrets get no hint.
 * Counted in code points so a hint never splits a character.
 */
export const SECRET_HINT_MIN_LENGTH = 12;

export function secretHint(secret: string): string | null {
  // Code points (not grapheme clusters) are enough here: only the count and the tail matter.
  const characters = Array.from(secret);
  return characters.length >= SECRET_HINT_MIN_LENGTH ? characters.slice(-4).join('') : null;
}

const columns = (sql: Db) => sql`
  id, app, issuer, client_id, auth_method, source, status, selected, client_secret_hint,
  created_at, updated_at, rotated_at, retired_at`;

function isUniqueViolation(error: unknown, index: string): boolean {
  return (
    error instanceof postgres.PostgresError &&
    error.code === '23505' &&
    error.constraint_name === index
  );
}

const ONE_ACTIVE_REGISTRATION = 'mcp_oauth_clients_one_active_registration';

export async function createMcpOAuthClient(
  sql: Db,
  keyring: Keyring,
  input: NewMcpOAuthClient,
): Promise<McpOAuthClientChange> {
  const id = uuidv7();
  const secret = input.clientSecret ?? null;
  try {
    const [row]: [McpOAuthClient?] = await sql`
      insert into mcp_oauth_clients (id, environment_id, app, issuer, client_id, auth_method, source,
                                     client_secret_sealed, client_secret_hint)
      values (${id}, ${input.environmentId}, ${input.app}, ${input.issuer}, ${input.clientId},
              ${input.authMethod}, ${input.source},
              ${secret === null ? null : seal(keyring, secret, secretAad(id))},
              ${secret === null ? null : secretHint(secret)})
      returning ${columns(sql)}`;
    if (!row) throw new Error('MCP OAuth client insert returned nothing');
    return { ok: true, client: row };
  } catch (error) {
    if (isUniqueViolation(error, ONE_ACTIVE_REGISTRATION))
      return { ok: false, reason: 'duplicate' };
    throw error;
  }
}

/** Every client of the environment, retired ones included, by app and then age. */
export async function listMcpOAuthClients(
  sql: Db,
  environmentId: string,
): Promise<McpOAuthClient[]> {
  return sql<McpOAuthClient[]>`
    select ${columns(sql)} from mcp_oauth_clients
    where environment_id = ${environmentId}
    order by app, created_at, id`;
}

export async function findMcpOAuthClient(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<McpOAuthClient | null> {
  const [row]: [McpOAuthClient?] = await sql`
    select ${columns(sql)} from mcp_oauth_clients
    where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}

/** The client an app's new connections identify Gatehouse with, if one is selected. */
export async function findSelectedMcpOAuthClient(
  sql: Db,
  environmentId: string,
  app: string,
): Promise<McpOAuthClient | null> {
  const [row]: [McpOAuthClient?] = await sql`
    select ${columns(sql)} from mcp_oauth_clients
    where environment_id = ${environmentId} and app = ${app} and selected`;
  return row ?? null;
}

/** Why a conditional update touched no row, from the row as it is now. */
async function refusal(sql: Db, environmentId: string, id: string): Promise<McpOAuthClientChange> {
  const client = await findMcpOAuthClient(sql, environmentId, id);
  if (!client) return { ok: false, reason: 'not_found' };
  if (client.status === 'retired') return { ok: false, reason: 'retired' };
  if (client.authMethod === 'none') return { ok: false, reason: 'public' };
  throw new Error(`MCP OAuth client ${id} was neither changed nor refused`);
}

/** A new secret, and optionally a new client id, for an active confidential client. */
export async function rotateMcpOAuthClient(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  id: string,
  input: { clientSecret: string; clientId?: string | undefined },
): Promise<McpOAuthClientChange> {
  try {
    const [row]: [McpOAuthClient?] = await sql`
      update mcp_oauth_clients set
        client_secret_sealed = ${seal(keyring, input.clientSecret, secretAad(id))},
        client_secret_hint = ${secretHint(input.clientSecret)},
        client_id = coalesce(${input.clientId ?? null}::text, client_id),
        rotated_at = now(), updated_at = now()
      where environment_id = ${environmentId} and id = ${id}
        and status = 'active' and auth_method <> 'none'
      returning ${columns(sql)}`;
    return row ? { ok: true, client: row } : await refusal(sql, environmentId, id);
  } catch (error) {
    if (isUniqueViolation(error, ONE_ACTIVE_REGISTRATION))
      return { ok: false, reason: 'duplicate' };
    throw error;
  }
}

/** Retiring is final: the client is unselected and its secret erased. */
export async function retireMcpOAuthClient(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<McpOAuthClientChange> {
  const [row]: [McpOAuthClient?] = await sql`
    update mcp_oauth_clients set
      status = 'retired', selected = false, client_secret_sealed = null,
      retired_at = now(), updated_at = now()
    where environment_id = ${environmentId} and id = ${id} and status = 'active'
    returning ${columns(sql)}`;
  return row ? { ok: true, client: row } : await refusal(sql, environmentId, id);
}

/**
 * Makes the client its app's selected one, unselecting the previous one in the same
 * transaction. Every client of the app is locked first, so two selections for one app queue
 * up instead of the second failing on the one-selected-per-app index.
 */
export async function selectMcpOAuthClient(
  sql: Sql,
  environmentId: string,
  id: string,
): Promise<McpOAuthClientChange> {
  return sql.begin(async (tx): Promise<McpOAuthClientChange> => {
    const target = await findMcpOAuthClient(tx, environmentId, id);
    if (!target) return { ok: false, reason: 'not_found' };
    await tx`
      select id from mcp_oauth_clients
      where environment_id = ${environmentId} and app = ${target.app}
      order by id for update`;
    // Read again under the lock: a concurrent retire may have landed in between.
    const locked = await findMcpOAuthClient(tx, environmentId, id);
    if (!locked) return { ok: false, reason: 'not_found' };
    if (locked.status === 'retired') return { ok: false, reason: 'retired' };
    if (locked.selected) return { ok: true, client: locked };
    await tx`
      update mcp_oauth_clients set selected = false, updated_at = now()
      where environment_id = ${environmentId} and app = ${locked.app} and selected`;
    const [row]: [McpOAuthClient?] = await tx`
      update mcp_oauth_clients set selected = true, updated_at = now()
      where environment_id = ${environmentId} and id = ${id}
      returning ${columns(tx)}`;
    if (!row) throw new Error(`MCP OAuth client ${id} vanished while locked`);
    return { ok: true, client: row };
  });
}

/**
 * The client secret in clear, for a token request and nothing else; null for a public or
 * retired client. Never returned by the API.
 */
export async function revealMcpOAuthClientSecret(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  id: string,
): Promise<string | null> {
  const [row]: [{ clientSecretSealed: string | null }?] = await sql`
    select client_secret_sealed from mcp_oauth_clients
    where environment_id = ${environmentId} and id = ${id}`;
  if (!row?.clientSecretSealed) return null;
  return open(keyring, row.clientSecretSealed, secretAad(id));
}
