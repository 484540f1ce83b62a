import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

export interface AuthConfig {
  id: string;
  app: string;
  name: string;
  clientId: string;
  clientSecretHint: string;
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

export async function createAuthConfig(
  sql: Db,
  keyring: Keyring,
  input: NewAuthConfig,
): Promise<AuthConfig> {
  const id = uuidv7();
  const [row]: [AuthConfig?] = await sql`
    insert into auth_configs (id, environment_id, app, name, client_id, client_secret_sealed, client_secret_hint)
    values (${id}, ${input.environmentId}, ${input.app}, ${input.name}, ${input.clientId},
            ${seal(keyring, input.clientSecret, secretAad(id))}, ${input.clientSecret.slice(-4)})
    returning id, app, name, client_id, client_secret_hint, enabled, created_at, disabled_at`;
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
    select id, app, name, client_id, client_secret_hint, enabled, created_at, disabled_at
    from auth_configs
    where environment_id = ${environmentId} and app = ${app} and enabled
    order by created_at desc
    limit 1`;
  return row ?? null;
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
