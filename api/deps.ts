import type { Client } from '@temporalio/client';
import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';

/**
 * What the API is built from. Its own module, below `app.ts` and every route, so routes take it
 * without importing the app that mounts them: no import cycles.
 */
export interface ApiDeps {
  config: Config;
  sql: Sql;
  temporal: Client;
  logger: Logger;
}
