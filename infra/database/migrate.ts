import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import Postgrator from 'postgrator';

const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url));

/** Arbitrary constant: every Gatehouse process that migrates takes this advisory lock first. */
const MIGRATION_LOCK = 4_206_661;

/**
 * Brings the schema to the newest version. Several API and worker processes may start at once,
 * so migrations run under a session-level advisory lock. The connection is its own (no column
 * name transform) because postgrator reads its bookkeeping table by snake_case names.
 */
export async function migrate(
  databaseUrl: string,
): Promise<{ applied: string[]; version: number }> {
  const connection = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    await connection`select pg_advisory_lock(${MIGRATION_LOCK})`;
    const postgrator = new Postgrator({
      migrationPattern: `${migrationsDir}/*.sql`,
      driver: 'pg',
      schemaTable: 'schema_migrations',
      execQuery: async (query: string) => ({ rows: await connection.unsafe(query).simple() }),
    });
    const applied = await postgrator.migrate();
    return {
      applied: applied.map((m) => m.filename.replace(/^.*\//, '')),
      version: await postgrator.getDatabaseVersion(),
    };
  } finally {
    await connection.end({ timeout: 5 });
  }
}
