import { createApiKey, findCallerByKey, type NewApiKey } from '../../activities/db/api-keys.js';
import { createAuthConfig, findEnabledAuthConfig } from '../../activities/db/auth-configs.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import type { Config } from '../config.js';
import type { Sql } from '../database/client.js';
import { saveLocalState, type LocalState } from './local-state.js';

export const DEV_ENVIRONMENT = 'development';
export const DEMO_APP = 'acme';

/**
 * Separation of duties: a governed agent cannot approve its own calls or rewrite its policy, so the
 * quick start needs one key to call with and another to decide with.
 */
export const DEV_KEYS = {
  agentKey: { name: 'demo agent', access: 'standard', agentId: 'demo-agent', audience: 'backend' },
  adminKey: { name: 'admin', access: 'full', agentId: 'admin', audience: 'business' },
} as const satisfies Record<string, Pick<NewApiKey, 'name' | 'access' | 'agentId' | 'audience'>>;

/** Seeds what makes the demo work out of the box: the environment, two keys, the acme client. */
export async function seedDevelopment(
  sql: Sql,
  config: Config,
  state: LocalState,
): Promise<Record<keyof typeof DEV_KEYS, string>> {
  const environment = await ensureEnvironment(sql, DEV_ENVIRONMENT);
  let saved = state;
  const ensureKey = async (field: keyof typeof DEV_KEYS): Promise<string> => {
    const kept = saved[field];
    // A kept key the database no longer knows (.data/postgres deleted) is replaced, not printed.
    if (kept && (await findCallerByKey(sql, kept))) return kept;
    const { key } = await createApiKey(sql, {
      environmentId: environment.id,
      environmentName: environment.name,
      ...DEV_KEYS[field],
    });
    saved = await saveLocalState({ ...saved, [field]: key });
    return key;
  };
  const agentKey = await ensureKey('agentKey');
  const adminKey = await ensureKey('adminKey');
  if (!(await findEnabledAuthConfig(sql, environment.id, DEMO_APP))) {
    await createAuthConfig(sql, config.encryption, {
      environmentId: environment.id,
      app: DEMO_APP,
      name: 'Acme demo app (gatehouse dev)',
      clientId: state.demoApp.clientId,
      clientSecret: state.demoApp.clientSecret,
    });
  }
  return { agentKey, adminKey };
}
