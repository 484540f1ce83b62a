import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';

const WINDOW_SECONDS = 60;
/** At most one warning per limiter this often while Postgres does not answer it. */
const OUTAGE_WARNING_INTERVAL_MS = 10_000;
/** Past this many keys holding points, those whose window has ended are let go. */
const HELD_KEYS_SWEEP_AT = 10_000;

/**
 * The `pg` query interface RateLimiterPostgres calls (`storeType: 'pool'`: `query({text,
 * values})` resolving to `{rows, rowCount}`), answered by the service's own postgres.js pool. So
 * the limiter shares the pool's bounds (connect and statement timeouts, the silence watch) and its
 * lifecycle, instead of a second driver and pool with settings of their own. The statement name
 * the library passes is not needed: postgres.js prepares statements by their text.
 */
function storeClient(sql: Sql) {
  return {
    async query(statement: { text: string; values?: (string | number | null)[] }) {
      const rows = await sql.unsafe(statement.text, statement.values ?? [], { prepare: true });
      return { rows, rowCount: rows.count };
    },
  };
}

export type Verdict = { limited: false } | { limited: true; retryAfterSeconds: number };

const ALLOWED: Verdict = { limited: false };

function retryAfterMs(ms: number): Verdict {
  return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) };
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`no answer within ${String(ms)} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

/** Points of one key this process took from the shared count, to spend until `until`. */
interface Held {
  left: number;
  until: number;
  /** The shared count reached the limit: no more points this window. */
  exhausted: boolean;
}

/**
 * One limit: `points` requests per key per minute, counted in Postgres so that every API process
 * shares it. When Postgres does not answer within `timeoutMs` (slow, frozen, down), the request
 * is counted in this process only, with the same limit: a limiter must never be the reason a
 * request fails or waits, and an outage must not lift the limits either. The request then meets
 * Postgres' own failure path, if it needs Postgres at all.
 *
 * With `block` above 1, a process takes a key's points from the shared count `block` at a time and
 * spends them in memory, so that a busy key costs one statement per `block` requests rather than
 * one each. Points taken are counted at once, so all processes together still admit at most
 * `points` a window; the price is that points one process holds unspent are not another's, so a key
 * may be refused up to (processes − 1) × `block` early.
 */
export class SharedLimit {
  private readonly shared: RateLimiterPostgres;
  private readonly local: RateLimiterMemory;
  private readonly held = new Map<string, Held>();
  /** The one request per key that is taking points from Postgres; the others wait for it. */
  private readonly taking = new Map<string, Promise<boolean>>();
  private warnedAt = 0;

  constructor(
    private readonly name: string,
    private readonly points: number,
    private readonly deps: { sql: Sql; timeoutMs: number; sweeps: boolean; block?: number },
  ) {
    this.shared = new RateLimiterPostgres({
      storeClient: storeClient(deps.sql),
      storeType: 'pool',
      tableName: 'rate_limits',
      // The table comes with the migrations (013), so the library does not create it.
      tableCreated: true,
      // One limiter per process deletes expired rows (every five minutes); they share the table.
      clearExpiredByTimeout: deps.sweeps,
      keyPrefix: name,
      points,
      duration: WINDOW_SECONDS,
      // A key over its limit is refused by this process until its window ends without asking
      // Postgres again: a flood costs one statement per process, not one per request.
      inMemoryBlockOnConsumed: points + 1,
    });
    this.local = new RateLimiterMemory({ keyPrefix: name, points, duration: WINDOW_SECONDS });
  }

  async consume(key: string, log: Logger): Promise<Verdict> {
    const block = this.deps.block ?? 1;
    if (block <= 1) return this.consumeShared(key, log);
    for (;;) {
      const held = this.held.get(key);
      if (held && Date.now() < held.until) {
        if (held.left > 0) {
          held.left -= 1;
          return ALLOWED;
        }
        if (held.exhausted) return retryAfterMs(held.until - Date.now());
      }
      let taking = this.taking.get(key);
      if (!taking) {
        taking = this.take(key, block, log).finally(() => this.taking.delete(key));
        this.taking.set(key, taking);
      }
      if (!(await taking)) return this.consumeLocal(key, log);
    }
  }

  /** Takes up to `block` points from the shared count; false when Postgres did not answer. */
  private async take(key: string, block: number, log: Logger): Promise<boolean> {
    const now = Date.now();
    let granted: number;
    let windowMs: number;
    try {
      const res = await within(this.shared.consume(key, block), this.deps.timeoutMs);
      [granted, windowMs] = [block, res.msBeforeNext];
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) {
        this.warn(error, log);
        return false;
      }
      // Over the limit: what was left of it before this block (none, when the library refused
      // from memory without counting: consumedPoints 0).
      const over = error.consumedPoints - this.points;
      granted = error.consumedPoints > 0 ? Math.min(block, Math.max(0, block - over)) : 0;
      windowMs = error.msBeforeNext;
    }
    if (this.held.size >= HELD_KEYS_SWEEP_AT) {
      for (const [k, h] of this.held) if (h.until <= now) this.held.delete(k);
    }
    this.held.set(key, { left: granted, until: now + windowMs, exhausted: granted < block });
    return true;
  }

  private async consumeShared(key: string, log: Logger): Promise<Verdict> {
    try {
      await within(this.shared.consume(key), this.deps.timeoutMs);
      return ALLOWED;
    } catch (error) {
      if (error instanceof RateLimiterRes) return retryAfterMs(error.msBeforeNext);
      this.warn(error, log);
    }
    return this.consumeLocal(key, log);
  }

  private async consumeLocal(key: string, log: Logger): Promise<Verdict> {
    try {
      await this.local.consume(key);
      return ALLOWED;
    } catch (error) {
      if (error instanceof RateLimiterRes) return retryAfterMs(error.msBeforeNext);
      this.warn(error, log);
      return ALLOWED;
    }
  }

  private warn(err: unknown, log: Logger): void {
    const now = Date.now();
    if (now - this.warnedAt < OUTAGE_WARNING_INTERVAL_MS) return;
    this.warnedAt = now;
    log.warn(
      { err, limiter: this.name },
      'rate limiter store did not answer; counting in this process only',
    );
  }
}
