import { columns, ratio, type Row } from './columns.js';
import type { HeldResult } from './held-calls.js';
import type { Measurement } from './measure.js';

/** The held-calls scenario's goals, as ratios within its own run. */
export function heldGoals(result: HeldResult) {
  const holdOverAllowed = ratio(result.hold.throughput, result.allowedC8.before.throughput);
  const allowedP50Change = ratio(result.allowed.during.p50, result.allowed.before.p50);
  const { burst } = result;
  return [
    {
      goal: 'held calls/s at c=8 ≥ 0.5× allowed runs/s at c=8',
      value: holdOverAllowed,
      met: holdOverAllowed >= 0.5,
    },
    { goal: 'holding p99 < 2 s', value: result.hold.p99, met: result.hold.p99 < 2000 },
    {
      goal: 'allowed p50 with all held within 10% of without',
      value: allowedP50Change,
      met: allowedP50Change <= 1.1,
    },
    {
      goal: 'worker RSS (peak) under 1 GiB',
      value: result.rss.peak.worker,
      met: result.rss.peak.worker < 1024,
    },
    {
      goal: 'approval burst: 0 duplicate, 0 lost, 0 × 503',
      value: burst.duplicates + burst.lost + burst.unavailable,
      met: burst.duplicates === 0 && burst.lost === 0 && burst.unavailable === 0,
    },
    {
      goal: 'expiring tenth: all expired, none ran',
      value: result.expiry.expired,
      met: result.expiry.expired === result.expiry.calls && result.expiry.ran === 0,
    },
  ];
}

/** The console's view of one held-calls run. */
export function heldTable(result: HeldResult): string {
  const floorP50 = result.floor.p50;
  const rows: Row[] = [
    ['held calls', 'requests', 'errors', 'p50 ms', 'p99 ms', 'req/s', 'p50 ÷ floor'],
  ];
  const add = (name: string, m: Measurement) =>
    rows.push([name, m.requests, m.errors, m.p50, m.p99, m.throughput, ratio(m.p50, floorP50)]);
  add('engine floor (empty workflow)', result.floor);
  add('allowed read, nothing held', result.allowed.before);
  add('allowed read c=8, nothing held', result.allowedC8.before);
  add('hold a call c=8 (403 approval_required)', result.hold);
  add('hold a call c=32 (the expiring tenth)', result.holdExpiring);
  add('inbox first page', result.inbox.firstPage);
  add('inbox deep page', result.inbox.deepPage);
  add('inbox by agent', result.inbox.byAgent);
  add('inbox by user', result.inbox.byUser);
  add('allowed read, all held', result.allowed.during);
  add('allowed read c=8, all held', result.allowedC8.during);
  add('burst: approve c=16', result.burst.approve);
  add('burst: retry after approval', result.burst.retry);
  add('burst: approve + retry', result.burst.roundTrip);
  add('reject c=16', result.rejections.reject);

  const memory: Row[] = [['RSS MB', 'api', 'worker', 'temporal']];
  for (const [when, rss] of Object.entries(result.rss)) {
    memory.push([when, rss.api, rss.worker, rss.temporal]);
  }
  const cpu: Row[] = [['CPU ms per call', 'api', 'worker', 'temporal', 'postgres', 'total']];
  for (const [what, ms] of Object.entries(result.cpuMsPerCall)) {
    cpu.push([`${what} c=8`, ms.api, ms.worker, ms.temporal, ms.postgres, ms.total]);
  }
  const { burst, expiry, rejections } = result;
  const lines = [
    `burst: ${String(burst.ranOnce)} ran once, ${String(burst.duplicates)} more than once, ` +
      `${String(burst.lost)} not at all, ${String(burst.unavailable)} × 503`,
    `expiry: ${String(expiry.expired)} of ${String(expiry.calls)} expired ` +
      `(${String(expiry.stillPending)} still pending, ${String(expiry.ran)} ran), expires_at ` +
      `spread ${String(expiry.spreadSeconds)} s, all expired ${String(expiry.settledAfterSeconds)} s after the last`,
    `rejections: ${String(rejections.ran)} ran`,
    ...heldGoals(result).map(
      (g) => `${g.met ? 'met    ' : 'not met'}  ${g.goal}: ${String(g.value)}`,
    ),
  ];
  return `${columns(rows)}\n\n${columns(memory)}\n\n${columns(cpu)}\n\n${lines.join('\n')}\n`;
}
