import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';
import { checkDatabaseActivity } from './health/check-database.js';

export interface ActivityDeps {
  sql: Sql;
  logger: Logger;
}

/**
 * Every activity the worker registers, built from its dependencies so tests and the worker wire
 * the same code. Workflows see this object's type only.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    checkDatabase: checkDatabaseActivity(deps.sql),
  };
}

export type Activities = ReturnType<typeof createActivities>;
