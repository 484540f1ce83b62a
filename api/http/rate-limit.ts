import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimits } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { renderErrorPage, DEFAULT_BRANDING } from '../connect/pages/index.js';
import { sendPage } from '../connect/respond.js';
import { ApiError } from '../errors.js';

const WINDOW_SECONDS = 60;
/** At most one warning per limiter this often while Postgres does not answer it. */
const OUTAGE_WARNING_INTERVAL_MS = 10_000;

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

type Verdict = { limited: false } | { limited: true; retryAfterSeconds: number };

function retryAfter(res: RateLimiterRes): Verdict {
  return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
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

/**
 * One limit: `points` requests per key per minute, counted in Postgres so that every API process
 * shares it. When Postgres does not answer within `timeoutMs` (slow, frozen, down), the request
 * is counted in this process only, with the same limit: a limiter must never be the reason a
 * request fails or waits, and an outage must not lift the limits either. The request then meets
 * Postgres' own failure path, if it needs Postgres at all.
 */
class SharedLimit {
  private readonly shared: RateLimiterPostgres;
  private readonly local: RateLimiterMemory;
  private warnedAt = 0;

  constructor(
    private readonly name: string,
    points: number,
    private readonly deps: { sql: Sql; timeoutMs: number; sweeps: boolean },
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
    try {
      await within(this.shared.consume(key), this.deps.timeoutMs);
      return { limited: false };
    } catch (error) {
      if (error instanceof RateLimiterRes) return retryAfter(error);
      this.warn(error, log);
    }
    try {
      await this.local.consume(key);
      return { limited: false };
    } catch (error) {
      if (error instanceof RateLimiterRes) return retryAfter(error);
      this.warn(error, log);
      return { limited: false };
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

/**
 * A client's address for counting: the address itself for IPv4, its /64 for IPv6, where one
 * subscriber is routinely given a whole /64 and could otherwise start afresh at every address.
 */
export function clientBucket(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return address ?? 'unknown';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

function rateLimited(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(
    'rate_limited',
    `${message} Retry in ${String(retryAfterSeconds)} seconds.`,
    {},
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

/** What a hosted page found its link token to be, once looked up. */
export interface PageLink {
  /** The token (of the URL, or the callback's state): counted by its hash, never stored. */
  token: string;
  /** False when it names no link that can be used: unknown, malformed, expired or spent. */
  usable: boolean;
}

export interface PageLimits {
  /**
   * Counts a request to a hosted page once its link is known (issue 19): a token that is no
   * good counts against the client's address, a good one against its link. Over the limit, it
   * answers 429 itself (a page for a browser) and returns true.
   */
  refused(req: Request, res: Response, link: PageLink): Promise<boolean>;
}

export interface RateLimiting {
  /** Wraps the key check: counts its failures per client address, and its callers per key. */
  authenticate(inner: RequestHandler): RequestHandler;
  /** Counts requests to the hosted connect and approval pages. */
  pages: PageLimits;
}

/** A link's bucket: a digest of its token, so the count never holds a credential. */
function linkBucket(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 22);
}

/**
 * The service's own rate limits (issue 12, DESIGN.md §7 `rate_limited`). A limited request gets
 * 429 `rate_limited` with `Retry-After` in seconds, in the envelope, or as a page for a browser
 * on a hosted page. Keys have 192 random bits, so the limit on failed authentications is not
 * what stops guessing: it keeps a flood of wrong keys from costing a lookup each, and a valid key
 * sent from a limited address is still served (one misbehaving client behind a shared address
 * does not lock out the others).
 */
export function rateLimiting(deps: { limits: RateLimits; sql: Sql }): RateLimiting {
  const { limits } = deps;
  if (!limits.enabled) {
    return { authenticate: (inner) => inner, pages: { refused: () => Promise.resolve(false) } };
  }
  const shared = { sql: deps.sql, timeoutMs: limits.timeoutMs };
  const failedAuth = new SharedLimit('auth-failed', limits.failedAuthPerMinute, {
    ...shared,
    sweeps: true,
  });
  const perKey = new SharedLimit('key', limits.perKeyPerMinute, { ...shared, sweeps: false });
  // Hosted pages count failures and uses apart (issue 19): a colleague's mistyped links behind
  // the same address must not lock a person out of a real one, and a flood of one real link is
  // that link's alone.
  const pageFailures = new SharedLimit('page-failures', limits.pagesPerMinute, {
    ...shared,
    sweeps: false,
  });
  const linkUses = new SharedLimit('link-uses', limits.pagesPerMinute, {
    ...shared,
    sweeps: false,
  });

  const authenticate = (inner: RequestHandler): RequestHandler => {
    return async (req, res, next) => {
      const outcome = { passed: false };
      try {
        await inner(req, res, (error?: unknown) => {
          if (error === undefined) outcome.passed = true;
          else next(error);
        });
      } catch (error) {
        // Any refused credential: an API key, or an MCP address's secret (same code).
        if (error instanceof ApiError && error.code === 'invalid_api_key') {
          const verdict = await failedAuth.consume(clientBucket(req.ip), req.log);
          if (verdict.limited) {
            throw rateLimited(
              'Too many requests with a wrong or missing API key from this address.',
              verdict.retryAfterSeconds,
            );
          }
        }
        throw error;
      }
      if (!outcome.passed) return;
      const caller = res.locals.caller;
      if (caller) {
        const verdict = await perKey.consume(caller.keyId, req.log);
        if (verdict.limited) {
          throw rateLimited(
            `This API key has made more than ${String(limits.perKeyPerMinute)} requests in a minute.`,
            verdict.retryAfterSeconds,
          );
        }
      }
      next();
    };
  };

  const pages: PageLimits = {
    async refused(req, res, link) {
      const verdict = link.usable
        ? await linkUses.consume(linkBucket(link.token), req.log)
        : await pageFailures.consume(clientBucket(req.ip), req.log);
      if (!verdict.limited) return false;
      const wait = String(verdict.retryAfterSeconds);
      const error = rateLimited(
        link.usable
          ? 'This link was opened too many times in a minute.'
          : 'Too many requests with unknown or expired links from this address.',
        verdict.retryAfterSeconds,
      );
      res.set(error.headers);
      if (req.accepts(['json', 'html']) !== 'html') {
        res.status(error.status).json(error.toEnvelope());
        return true;
      }
      sendPage(
        res,
        error.status,
        renderErrorPage({
          branding: DEFAULT_BRANDING,
          title: 'Too many requests',
          message: link.usable
            ? `This link was opened too many times in the last minute. Wait ${wait} seconds, then open it again.`
            : `Too many links that do not work were opened from your network in the last minute. Wait ${wait} seconds, then open your link again.`,
          code: 'rate_limited',
        }),
      );
      return true;
    },
  };

  return { authenticate, pages };
}
