import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createSql, type Sql } from '../../infra/database/client.js';
import { migrate } from '../../infra/database/migrate.js';
import { testEnv } from './stack-env.js';
import { withDatabase } from './template-database.js';

export interface TestDatabase {
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

async function asAdmin(run: (admin: postgres.Sql) => Promise<unknown>): Promise<void> {
  const admin = postgres(testEnv('adminDatabaseUrl'), { max: 1, onnotice: () => undefined });
  try {
    await run(admin);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * A fresh, fully migrated database of its own for one test file: a copy of the run's template
 * (test/support/template-database.ts), then brought to the newest migration, which finds
 * nothing left to apply unless a migration was added while the run went on.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `gatehouse_test_${randomBytes(6).toString('hex')}`;
  const template = testEnv('templateDatabase');
  await asAdmin((admin) => admin.unsafe(`create database ${name} template ${template}`));
  const url = withDatabase(testEnv('adminDatabaseUrl'), name);
  await migrate(url);
  const sql = createSql(url, { max: 5 });
  return {
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      await asAdmin((admin) => admin.unsafe(`drop database if exists ${name} with (force)`));
    },
  };
}
