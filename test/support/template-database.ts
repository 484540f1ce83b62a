import postgres from 'postgres';
import { migrate } from '../../infra/database/migrate.js';

/** The same server's URL for another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function asAdmin(adminUrl: string, statement: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * Creates `name` and migrates it to the newest migration. Nothing stays connected to it: Postgres
 * copies a template only while no session uses it.
 */
export async function createTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  await asAdmin(adminUrl, `create database ${name}`);
  await migrate(withDatabase(adminUrl, name));
}

/** Drops it with the run; on a DATABASE_URL server the run's template must not stay behind. */
export async function dropTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  await asAdmin(adminUrl, `drop database if exists ${name} with (force)`);
}
