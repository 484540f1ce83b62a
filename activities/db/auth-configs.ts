import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

export interface AuthConfig {
  id: string;
  app: string;
  name: string;
  clientId: string;
  /** The secret's last four characters, or null when the secret is too short to show any. */
  clientSecretHint: string | null;
  enabled: boolean;
  createdAt: Date;
  disabledAt: Date | null;
}

export interface NewAuthConfig {
  environmentId: string;
  app: string;
  name: string;
  clientId: string;
  clientSecret: string;
}

const secretAad = (id: string) => `auth_config:${id}:client_secret`;

/**
 * Four characters of a 6-character secret would give most of it away, so the hint is kept only
 * when at least eight characters stay hidden. Code points, not UTF-16 units, so that a hint
 * never ends in half a character.
 */
export const HINT_MIN_SECRET_LENGTH = 12;

export function secretHint(secret: string): string {
  const chars = Array.from(secret);
  return chars.length >= HINT_MIN_SECRET_LENGTH ? chars.slice(-4).join('') : '';
}

// The hint column is not null; an empty hint (short secret) reads as null.
const columns = (sql: Db) => sql`
  id, app, name, client_id, nullif(client_secret_hint, '') as client_secret_hint, enabled,
  created_at, disabled_at`;

/** Ids are UUIDs in the table; anything else cannot name a row (and Postgres would refuse it). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function createAuthConfig(
  sql: Db,
  keyring: Keyring,
  input: NewAuthConfig,
): Promise<AuthConfig> {
  const id = uuidv7();
  const [row]: [AuthConfig?] = await sql`
    insert into auth_configs (id, environment_id, app, name, client_id, client_secret_sealed, client_secret_hint)
    values (${id}, ${input.environmentId}, ${input.app}, ${input.name}, ${input.clientId},
            ${seal(keyring, input.clientSecret, secretAad(id))}, ${secretHint(input.clientSecret)})
    returning ${columns(sql)}`;
  if (!row) throw new Error('auth config insert returned nothing');
  return row;
}

/** The client new connections to `app` use in this environment: its newest enabled auth config. */
export async function findEnabledAuthConfig(
  sql: Db,
  environmentId: string,
  app: string,
): Promise<AuthConfig | null> {
  const [row]: [AuthConfig?] = await sql`
    select ${columns(sql)}
    from auth_configs
    where environment_id = ${environmentId} and app = ${app} and enabled
    order by created_at desc, id desc
    limit 1`;
  return row ?? null;
}

/** One auth config of the environment, enabled or not; null for an unknown or foreign id. */
export async function findAuthConfig(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<AuthConfig | null> {
  if (!UUID.test(id)) return null;
  const [row]: [AuthConfig?] = await sql`
    select ${columns(sql)} from auth_configs
    where id = ${id} and environment_id = ${environmentId}`;
  return row ?? null;
}

/** Newest first; `after` is the id of the last config of the previous page (ids are UUIDv7). */
export async function listAuthConfigs(
  sql: Db,
  environmentId: string,
  options: { after?: string; limit: number },
): Promise<AuthConfig[]> {
  return sql<AuthConfig[]>`
    select ${columns(sql)} from auth_configs
    where environment_id = ${environmentId}
      ${options.after === undefined ? sql`` : sql`and id < ${options.after}`}
    order by id desc
    limit ${options.limit}`;
}

export type DisableResult =
  | { outcome: 'disabled'; authConfig: AuthConfig }
  | { outcome: 'already_disabled'; authConfig: AuthConfig }
  | { outcome: 'not_found' };

/**
 * Stops new connections from using the config; connections made with it keep
 * refreshing with it, since they name it by id. The update only touches an enabled row, so of
 * two concurrent calls exactly one disables and the other sees `already_disabled`.
 */
export async function disableAuthConfig(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<DisableResult> {
  if (!UUID.test(id)) return { outcome: 'not_found' };
  const [row]: [AuthConfig?] = await sql`
    update auth_configs set enabled = false, disabled_at = now()
    where id = ${id} and environment_id = ${environmentId} and enabled
    returning ${columns(sql)}`;
  if (row) return { outcome: 'disabled', authConfig: row };
  const existing = await findAuthConfig(sql, environmentId, id);
  return existing
    ? { outcome: 'already_disabled', authConfig: existing }
    : { outcome: 'not_found' };
}

/** The client secret in clear, for a token request; never returned by the API. */
export async function revealAuthConfigSecret(
  sql: Db,
  keyring: Keyring,
  id: string,
): Promise<string> {
  const [row]: [{ clientSecretSealed: string }?] = await sql`
    select client_secret_sealed from auth_configs where id = ${id}`;
  if (!row) throw new Error(`auth config ${id} not found`);
  return open(keyring, row.clientSecretSealed, secretAad(id));
}
