import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { findEnabledAuthConfig, revealAuthConfigSecret } from '../db/auth-configs.js';
import { findApp } from '../../workflows/catalog/index.js';
import { getFundedAccess } from '../db/funded-access.js';
import type { ClientCredentials } from './client.js';

/** Which OAuth client a connection uses: an auth config of its environment, or (null) the platform's. */
export interface OAuthClientChoice {
  authConfigId: string | null;
  credentials: ClientCredentials;
}

type Deps = Pick<Config, 'apps' | 'encryption'>;

/**
 * The OAuth client a new connection uses: the environment's enabled auth config for the app;
 * failing that, for a catalog app, the operator's platform client when funded access is on;
 * otherwise none (the caller answers 409). An OpenAPI app takes an auth config only: its id is
 * the environment's own, so a platform client named by it could meet another API elsewhere.
 */
export async function chooseClientForNewConnection(
  sql: Sql,
  config: Deps,
  environmentId: string,
  app: string,
): Promise<OAuthClientChoice | null> {
  const authConfig = await findEnabledAuthConfig(sql, environmentId, app);
  if (authConfig) {
    return {
      authConfigId: authConfig.id,
      credentials: {
        clientId: authConfig.clientId,
        clientSecret: await revealAuthConfigSecret(sql, config.encryption, authConfig.id),
      },
    };
  }
  const platform = findApp(app) ? config.apps.platformClients[app] : undefined;
  if (platform && (await getFundedAccess(sql, environmentId)).enabled) {
    return { authConfigId: null, credentials: platform };
  }
  return null;
}

/** The client an existing connection was authorised with; it keeps refreshing with it. */
export async function clientOfConnection(
  sql: Sql,
  config: Deps,
  connection: { app: string; authConfigId: string | null },
): Promise<ClientCredentials> {
  if (connection.authConfigId) {
    const [row]: [{ clientId: string }?] = await sql`
      select client_id from auth_configs where id = ${connection.authConfigId}`;
    if (!row) throw new Error(`auth config ${connection.authConfigId} is gone`);
    return {
      clientId: row.clientId,
      clientSecret: await revealAuthConfigSecret(sql, config.encryption, connection.authConfigId),
    };
  }
  const platform = config.apps.platformClients[connection.app];
  if (!platform) throw new Error(`no platform OAuth client is configured for ${connection.app}`);
  return platform;
}
