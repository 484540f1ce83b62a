/**
 * The test run's global set-up and teardown (what test/global-setup.js and
 * test/global-teardown.js run), once, from whichever checkout
 * this file is in; prints `database answered` once the run's Postgres answered a query. Run as
 * `node --import tsx test/support/global-setup-probe.ts`.
 */
import postgres from 'postgres';
import { testEnv } from './stack-env.js';
import { startStack } from './start-stack.js';
import { stopStack } from './stop-stack.js';

await startStack();
try {
  const sql = postgres(testEnv('adminDatabaseUrl'), { max: 1, onnotice: () => undefined });
  try {
    await sql`select 1`;
    console.log('database answered');
  } finally {
    await sql.end({ timeout: 5 });
  }
} finally {
  await stopStack();
}
