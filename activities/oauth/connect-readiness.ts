import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import { findEnabledAuthConfig } from '../db/auth-configs.js';
import { getFundedAccess } from '../db/funded-access.js';

/** Whose OAuth client a new connection would use: the environment's own, or the platform's. */
export type OAuthClientSource = 'auth_config' | 'funded_access';

export interface ConnectReadiness {
  /** The enabled auth config new connections use; null when the environment has none. */
  authConfigId: string | null;
  /** null: `POST /v1/connect/links` answers 409 `auth_config_required` for the app. */
  oauthClient: OAuthClientSource | null;
}

/**
 * For each app, what `chooseClientForNewConnection` (credentials.ts) would pick in this
 * environment, read without opening any client secret: so a catalog listing can
 * say which apps can be connected now and which still need an auth config.
 */
export async function connectReadiness(
  sql: Db,
  config: Pick<Config, 'apps'>,
  environmentId: string,
  appIds: readonly string[],
): Promise<Map<string, ConnectReadiness>> {
  const [funded, authConfigs] = await Promise.all([
    getFundedAccess(sql, environmentId),
    Promise.all(appIds.map((app) => findEnabledAuthConfig(sql, environmentId, app))),
  ]);
  return new Map(
    appIds.map((app, i) => {
      const authConfigId = authConfigs[i]?.id ?? null;
      const platform = funded.enabled && config.apps.platformClients[app] !== undefined;
      const oauthClient = authConfigId ? 'auth_config' : platform ? 'funded_access' : null;
      return [app, { authConfigId, oauthClient }];
    }),
  );
}
