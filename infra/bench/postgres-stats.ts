import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../database/client.js';

/**
 * Transactions committed or rolled back in the service's database so far. Every statement the
 * service sends outside an explicit transaction is one; the embedded server has no
 * pg_stat_statements, so this is the per-call statement count the report gives.
 */
export async function transactions(sql: Sql): Promise<number> {
  // Backends report their counters to the statistics system at most once a second.
  await sleep(1100);
  const [row]: [{ count: string }?] = await sql`
    select xact_commit + xact_rollback as count
    from pg_stat_database where datname = current_database()`;
  return Number(row?.count ?? 0);
}
