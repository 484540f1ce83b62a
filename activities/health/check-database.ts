import type { Sql } from '../../infra/database/client.js';

export interface DatabaseReport {
  serverVersion: string;
}

/** Proves the worker reaches Postgres: the activity half of the health-check workflow. */
export function checkDatabaseActivity(sql: Sql): () => Promise<DatabaseReport> {
  return async () => {
    const [row]: [{ serverVersion: string }?] =
      await sql`select current_setting('server_version') as server_version`;
    if (!row) throw new Error('Postgres returned no row for a version query');
    return { serverVersion: row.serverVersion };
  };
}
