import path from 'node:path';
import postgres from 'postgres';
import { createSql, type Sql } from '../database/client.js';
import { migrate } from '../database/migrate.js';
import { startEmbeddedPostgres } from '../dev/embedded-postgres.js';
import { dataDir, loadOrCreateLocalState } from '../dev/local-state.js';
import { readRunningStack } from '../dev/running-stack.js';

export const LOCAL_DATABASE = 'gatehouse';
export const localPostgresDir = path.join(dataDir, 'postgres');

async function answers(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => undefined });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}

/**
 * Runs a CLI command against the database: `DATABASE_URL` when set; otherwise the local embedded
 * Postgres of `gatehouse dev` (the running one, or started just for this command).
 */
export async function withCliDatabase<T>(run: (sql: Sql) => Promise<T>): Promise<T> {
  let url = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    const state = await loadOrCreateLocalState();
    // The running stack's Postgres may have moved off the preferred port for this run.
    const port = (await readRunningStack())?.postgresPort ?? state.postgres.port;
    const local = `postgres://gatehouse:${encodeURIComponent(state.postgres.password)}@127.0.0.1:${String(port)}/${LOCAL_DATABASE}`;
    if (await answers(local)) {
      url = local;
    } else {
      const pg = await startEmbeddedPostgres({
        directory: localPostgresDir,
        port: state.postgres.port,
        password: state.postgres.password,
      });
      await pg.ensureDatabase(LOCAL_DATABASE);
      url = pg.url(LOCAL_DATABASE);
      stop = () => pg.stop();
    }
  }
  try {
    await migrate(url);
    const sql = createSql(url, { max: 2 });
    try {
      return await run(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await stop?.();
  }
}
