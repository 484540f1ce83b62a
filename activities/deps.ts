import type { Client } from '@temporalio/client';
import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';

/**
 * What activities are built from. Its own module, below `index.ts`, so an activity can take it
 * without importing the index that registers it (no import cycle).
 */
export interface ActivityDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
  /** For activities that join other workflows (a call's token refresh through `refresh/<id>`). */
  temporal: Client;
}
