import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import Postgrator from 'postgrator';
import { acceptRewordedMigrations } from './reworded-migrations.js';

const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url));

/** Arbitrary constant: every Gatehouse process that migrates takes this advisory lock first. */
const MIGRATION_LOCK = 4_206_661;

const SCHEMA_TABLE = 'schema_migrations';

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
      schemaTable: SCHEMA_TABLE,
      execQuery: async (query: string) => ({ rows: await connection.unsafe(query).simple() }),
    });
    // postgrator refuses a database whose stored checksum of an applied file differs from the
    // file's; one migrated before a file's comments were reworded is let through here, and only
    // for the earlier texts ./reworded-migrations.ts records.
    await acceptRewordedMigrations(connection, SCHEMA_TABLE, await postgrator.getMigrations());
    const applied = await postgrator.migrate();
    return {
      applied: applied.map((m) => m.filename.replace(/^.*\//, '')),
      version: await postgrator.getDatabaseVersion(),
    };
  } finally {
    await connection.end({ timeout: 5 });
  }
}
