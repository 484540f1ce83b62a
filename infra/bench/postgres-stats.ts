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

/**
 * `transactions` once every backend has reported what it did: a backend that goes idle reports
 * its last counts only after 10 s (PGSTAT_IDLE_INTERVAL), so a short series read right after it
 * ends would leave its tail to the next one. For series of seconds, where that tail counts.
 */
export async function settledTransactions(sql: Sql): Promise<number> {
  await sleep(10_000);
  return transactions(sql);
}
