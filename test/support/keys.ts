import {
  createApiKey,
  type AccessLevel,
  type Audience,
  type Scope,
} from '../../activities/db/api-keys.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import type { Sql } from '../../infra/database/client.js';

export interface TestKey {
  key: string;
  id: string;
  environmentId: string;
}

/** A real API key in the named environment (created when missing). */
export async function createTestKey(
  sql: Sql,
  options: {
    env?: string;
    access: AccessLevel;
    scopes?: Scope[];
    agentId?: string;
    audience?: Audience;
    name?: string;
  },
): Promise<TestKey> {
  const environment = await ensureEnvironment(sql, options.env ?? 'test');
  const { key, record } = await createApiKey(sql, {
    environmentId: environment.id,
    environmentName: environment.name,
    name: options.name ?? `${options.access} test key`,
    access: options.access,
    ...(options.scopes ? { scopes: options.scopes } : {}),
    ...(options.agentId ? { agentId: options.agentId } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
  });
  return { key, id: record.id, environmentId: environment.id };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
