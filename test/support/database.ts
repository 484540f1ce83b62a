import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createSql, type Sql } from '../../infra/database/client.js';
import { migrate } from '../../infra/database/migrate.js';
import { testEnv } from './stack-env.js';

export interface TestDatabase {
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function asAdmin(run: (admin: postgres.Sql) => Promise<unknown>): Promise<void> {
  const admin = postgres(testEnv('adminDatabaseUrl'), { max: 1, onnotice: () => undefined });
  try {
    await run(admin);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** A fresh, fully migrated database of its own for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `gatehouse_test_${randomBytes(6).toString('hex')}`;
  await asAdmin((admin) => admin.unsafe(`create database ${name}`));
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
