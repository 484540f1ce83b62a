import { createApiKey, findCallerByKey, type NewApiKey } from '../../activities/db/api-keys.js';
import { createAuthConfig, findEnabledAuthConfig } from '../../activities/db/auth-configs.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import {
  listRoleMappings,
  setGroupRoles,
  type Role,
  type RoleMapping,
} from '../../activities/db/role-mappings.js';
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

/**
 * What the dev sign-in provider's groups may do in the development environment: the people of
 * `approvers` and of `finance` decide held calls (so a call can ask for one of each), and
 * `operators` govern and map roles.
 */
export const DEV_ROLE_MAPPINGS = {
  approvers: ['approver'],
  finance: ['approver'],
  operators: ['operator', 'admin'],
} as const satisfies Record<string, readonly Role[]>;

/**
 * Maps the dev groups to their roles, only in an environment with no mapping at all: what an
 * operator changed (a group's roles taken away included, as long as one mapping is left) is
 * theirs, and a restart keeps it. Resolves to the environment's mappings as they now are.
 */
export async function seedRoleMappings(sql: Sql, environmentId: string): Promise<RoleMapping[]> {
  const kept = await listRoleMappings(sql, environmentId);
  if (kept.length > 0) return kept;
  for (const [group, roles] of Object.entries(DEV_ROLE_MAPPINGS)) {
    await setGroupRoles(sql, environmentId, group, roles);
  }
  return listRoleMappings(sql, environmentId);
}

export interface DevelopmentSeed extends Record<keyof typeof DEV_KEYS, string> {
  /** The development environment's role mappings after the seed, for the banner. */
  roleMappings: RoleMapping[];
}

/**
 * Seeds what makes the demo work out of the box: the environment, two keys, the acme client,
 * and the roles of the dev sign-in provider's groups.
 */
export async function seedDevelopment(
  sql: Sql,
  config: Config,
  state: LocalState,
): Promise<DevelopmentSeed> {
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
  const roleMappings = await seedRoleMappings(sql, environment.id);
  return { agentKey, adminKey, roleMappings };
}
