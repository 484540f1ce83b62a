import { Gauge } from 'prom-client';
import type { Sql } from '../database/client.js';
import { registry } from './metrics.js';

/**
 * `gatehouse_held_calls`: calls waiting for a person, read from Postgres at each scrape (one
 * count over the partial index of pending approvals), so every API process reports the same
 * number and none has to track it. Registered by the API only: `max` across processes is the
 * number.
 */
export function watchHeldCalls(sql: Sql): void {
  new Gauge({
    name: 'gatehouse_held_calls',
    help: 'Calls held for approval now: pending approvals that have not expired',
    registers: [registry],
    async collect() {
      const [row]: [{ held: number }?] = await sql`
        select count(*)::int as held from approvals
        where status = 'pending' and expires_at > now()`;
      this.set(row?.held ?? 0);
    },
  });
}
