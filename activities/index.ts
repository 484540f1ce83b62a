import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';
import { connectionRecordActivities } from './connections/records.js';
import { checkDatabaseActivity } from './health/check-database.js';
import { exchangeCodeActivity } from './oauth/exchange-code.js';
import { refreshTokensActivity } from './oauth/refresh-tokens.js';
import { revokeAtProviderActivity } from './oauth/revoke-at-provider.js';

export interface ActivityDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
}

/**
 * Every activity the worker registers, built from its dependencies so tests and the worker wire
 * the same code. Workflows see this object's type only.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    checkDatabase: checkDatabaseActivity(deps.sql),
    exchangeCode: exchangeCodeActivity(deps),
    refreshTokens: refreshTokensActivity(deps),
    revokeAtProvider: revokeAtProviderActivity(deps),
    ...connectionRecordActivities(deps.sql),
  };
}

export type Activities = ReturnType<typeof createActivities>;
