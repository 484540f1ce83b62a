import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeCursor } from '../../api/http/id-cursor.js';
import { floorCall } from './engine-floor.js';
import { heldRequests, type HeldCall } from './held-requests.js';
import { seedHeldCast } from './held-seed.js';
import { measure, summarize, type Measurement } from './measure.js';
import { cpuByRole, cpuPerCall, type CpuMs } from './process-cpu.js';
import { rssByRole, type RssMb } from './process-memory.js';
import type { BenchStack } from './stack.js';

export interface HeldSettings {
  /** Calls held at once; a tenth of them by the agent whose approvals expire. */
  held: number;
  users: number;
  /** Sequential requests for each p50 (floor, allowed reads, each inbox page). */
  latencyRequests: number;
  throughputSeconds: number;
  /** The most approvals in the burst, and rejections after it (1,000 each). */
  burst: number;
  expiringTtlSeconds: number;
}

export interface HeldResult {
  settings: HeldSettings;
  floor: Measurement;
  /** Without held calls, then with all of them pending. */
  allowed: { before: Measurement; during: Measurement };
  allowedC8: { before: Measurement; during: Measurement };
  /** Holding at concurrency 8: each a 403 approval_required with its approval. */
  hold: Measurement;
  /** The expiring tenth, held at concurrency 32 so that they expire close together. */
  holdExpiring: Measurement;
  /** CPU ms per call by process: holding at c=8 beside an allowed read at c=8, nothing held. */
  cpuMsPerCall: { hold: CpuMs & { total: number }; allowed: CpuMs & { total: number } };
  inbox: Record<'firstPage' | 'deepPage' | 'byAgent' | 'byUser', Measurement>;
  rss: { idle: RssMb; held: RssMb; end: RssMb; peak: RssMb };
  expiry: {
    calls: number;
    expired: number;
    stillPending: number;
    ran: number;
    /** From the first expires_at to the last. */
    spreadSeconds: number;
    /** From the last expires_at until every one read `expired`. */
    settledAfterSeconds: number;
  };
  burst: {
    approve: Measurement;
    retry: Measurement;
    /** Approve and retry, one after the other, per call. */
    roundTrip: Measurement;
    unavailable: number;
    ranOnce: number;
    duplicates: number;
    lost: number;
  };
  rejections: { reject: Measurement; ran: number };
}

/** Peak RSS by role, sampled every second while the scenario runs. */
function rssPeaks() {
  const peak: RssMb = { api: 0, worker: 0, temporal: 0 };
  const state = { stopped: false };
  const sampling = (async () => {
    while (!state.stopped) {
      const now = await rssByRole();
      for (const role of Object.keys(peak) as (keyof RssMb)[]) {
        peak[role] = Math.max(peak[role], now[role]);
      }
      await sleep(1000);
    }
  })();
  return async () => {
    state.stopped = true;
    await sampling;
    return peak;
  };
}

/** Each call in `calls` through `request` at `concurrency`, timed. */
function over<T>(calls: T[], concurrency: number, request: (call: T) => Promise<boolean>) {
  return measure((i) => request(calls[i] as T), { concurrency, count: calls.length });
}

/**
 * `npm run bench -- --held N`: N distinct writes held at once across `users` users and
 * ten agents, then, with all pending: memory, the inbox, allowed calls beside them; then the
 * expiring tenth, a burst of approvals with their retries, and rejections.
 */
export async function heldCallsScenario(
  stack: BenchStack,
  settings: HeldSettings,
  log: (line: string) => void,
): Promise<HeldResult> {
  const requests = heldRequests(stack);
  const sequential = { concurrency: 1, count: settings.latencyRequests };
  const throughput = { concurrency: 8, durationMs: settings.throughputSeconds * 1000 };
  const floorRequest = floorCall(stack.temporal, stack.config.temporal.taskQueue);

  log(`seeding ${String(settings.users)} connected users and 11 agents`);
  const cast = await seedHeldCast(stack, settings.users, settings.expiringTtlSeconds);
  const stopPeaks = rssPeaks();
  log('warming up');
  await measure(floorRequest, { concurrency: 4, count: 50 });
  await measure(() => requests.allowedRead(), { concurrency: 4, count: 50 });
  const idle = await rssByRole();
  log('engine floor, then allowed reads with nothing held');
  const floor = await measure(floorRequest, sequential);
  const allowedBefore = await measure(() => requests.allowedRead(), sequential);
  const cpu0 = await cpuByRole();
  const allowedC8Before = await measure(() => requests.allowedRead(), throughput);
  const cpu1 = await cpuByRole();

  const run = randomUUID().slice(0, 8);
  const expiringCount = Math.floor(settings.held / 10);
  const call = (i: number, key: string): HeldCall => ({
    key,
    user: cast.users[i % cast.users.length] ?? '',
    title: `held ${run} ${String(i)}`,
    idempotencyKey: randomUUID(),
  });
  const regular = Array.from({ length: settings.held - expiringCount }, (_, i) =>
    call(i, cast.agentKeys[i % cast.agentKeys.length] ?? ''),
  );
  const expiring = Array.from({ length: expiringCount }, (_, i) =>
    call(regular.length + i, cast.expiring.key),
  );
  log(`holding ${String(regular.length)} calls at concurrency 8`);
  const cpu2 = await cpuByRole();
  const hold = await over(regular, 8, (c) => requests.hold(c));
  const cpu3 = await cpuByRole();
  log(
    `holding ${String(expiring.length)} calls that expire in ${String(settings.expiringTtlSeconds)} s`,
  );
  const holdExpiring = await over(expiring, 32, (c) => requests.hold(c));

  log(`with ${String(settings.held)} held: memory, the inbox, allowed reads`);
  const held = await rssByRole();
  const [deep]: [{ id: string }?] = await stack.sql`
    select id from approvals where status = 'pending'
    order by id desc offset ${Math.floor(settings.held / 2)} limit 1`;
  const inbox = {
    firstPage: await measure(() => requests.inbox('status=pending&limit=50'), sequential),
    deepPage: await measure(
      () => requests.inbox(`status=pending&limit=50&cursor=${encodeCursor(deep?.id ?? '')}`),
      sequential,
    ),
    byAgent: await measure(
      (i) => requests.inbox(`status=pending&limit=50&agent=held-agent-${String(i % 10)}`),
      sequential,
    ),
    byUser: await measure(
      (i) => requests.inbox(`status=pending&limit=50&user=u_held_${String(i % 100)}`),
      sequential,
    ),
  };
  const allowedDuring = await measure(() => requests.allowedRead(), sequential);
  const allowedC8During = await measure(() => requests.allowedRead(), throughput);

  log('waiting for the expiring tenth to expire');
  const expiry = await expiryOf(stack, cast.expiring.agentId, expiringCount);

  const size = Math.min(settings.burst, Math.floor(regular.length / 2));
  log(`burst: ${String(size)} approvals, each with its retry, at concurrency 16`);
  const approveMs: number[] = [];
  const retryMs: number[] = [];
  let unavailable = 0;
  const burstStarted = performance.now();
  const roundTrip = await over(regular.slice(0, size), 16, async (c) => {
    const t0 = performance.now();
    const approved = await requests.decide(c, 'approve');
    const t1 = performance.now();
    const status = await requests.retry(c);
    approveMs.push(t1 - t0);
    retryMs.push(performance.now() - t1);
    if (approved === 503 || status === 503) unavailable++;
    return approved === 200 && status === 200;
  });
  const burstMs = performance.now() - burstStarted;

  log(`${String(size)} rejections at concurrency 16`);
  const rejected = regular.slice(size, 2 * size);
  const reject = await over(
    rejected,
    16,
    async (c) => (await requests.decide(c, 'reject')) === 200,
  );

  const tasks = await requests.tasksByTitle();
  const ranTimes = (calls: HeldCall[]) => calls.map((c) => tasks.get(c.title) ?? 0);
  const burstRuns = ranTimes(regular.slice(0, size));
  const end = await rssByRole();
  return {
    settings,
    floor,
    allowed: { before: allowedBefore, during: allowedDuring },
    allowedC8: { before: allowedC8Before, during: allowedC8During },
    hold,
    holdExpiring,
    cpuMsPerCall: {
      hold: cpuPerCall(cpu2, cpu3, hold.requests),
      allowed: cpuPerCall(cpu0, cpu1, allowedC8Before.requests),
    },
    inbox,
    rss: { idle, held, end, peak: await stopPeaks() },
    expiry: { ...expiry, ran: ranTimes(expiring).reduce((a, b) => a + b, 0) },
    burst: {
      approve: summarize(approveMs, 0, burstMs),
      retry: summarize(retryMs, 0, burstMs),
      roundTrip,
      unavailable,
      ranOnce: burstRuns.filter((n) => n === 1).length,
      duplicates: burstRuns.filter((n) => n > 1).length,
      lost: burstRuns.filter((n) => n === 0).length,
    },
    rejections: { reject, ran: ranTimes(rejected).reduce((a, b) => a + b, 0) },
  };
}

/** Waits until the expiring agent's approvals have all expired, or a minute past the last. */
async function expiryOf(stack: BenchStack, agentId: string, calls: number) {
  const [span]: [{ first: Date; last: Date }?] = await stack.sql`
    select min(expires_at) as first, max(expires_at) as last from approvals
    where agent_id = ${agentId}`;
  const last = span?.last.getTime() ?? Date.now();
  const count = async () => {
    const [row]: [{ expired: number; pending: number }?] = await stack.sql`
      select count(*) filter (where status = 'expired')::int as expired,
        count(*) filter (where status = 'pending')::int as pending
      from approvals where agent_id = ${agentId}`;
    return row ?? { expired: 0, pending: 0 };
  };
  let now = await count();
  while (now.expired < calls && Date.now() < last + 60_000) {
    await sleep(1000);
    now = await count();
  }
  return {
    calls,
    expired: now.expired,
    stillPending: now.pending,
    spreadSeconds: Math.round((last - (span?.first.getTime() ?? last)) / 100) / 10,
    settledAfterSeconds: Math.round((Date.now() - last) / 100) / 10,
  };
}
