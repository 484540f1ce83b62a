import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import ipaddr from 'ipaddr.js';
import type { RateLimits } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { renderErrorPage, DEFAULT_BRANDING } from '../connect/pages/index.js';
import { sendPage } from '../connect/respond.js';
import { ApiError } from '../errors.js';
import { SharedLimit } from './shared-limit.js';
import { rateLimited as rateLimitedTotal } from '../../infra/telemetry/metrics.js';

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

function rateLimited(
  kind: 'key' | 'failed_auth' | 'pages',
  message: string,
  retryAfterSeconds: number,
): ApiError {
  rateLimitedTotal.inc({ kind });
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
   * Counts a request to a hosted page once its link is known: a token that is no good counts
   * against the client's address, a good one against its link. Over the limit, it answers 429
   * itself (a page for a browser) and returns true.
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
 * The service's own rate limits. A limited request gets 429 `rate_limited` with `Retry-After` in
 * seconds, in the envelope, or as a page for a browser on a hosted page. Keys have 192 random bits,
 * so the limit on failed authentications is not what stops guessing: it keeps a flood of wrong keys
 * from costing a lookup each, and a valid key sent from a limited address is still served (one
 * misbehaving client behind a shared address does not lock out the others).
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
  // A busy key's count is taken from Postgres 1% of its limit at a time.
  const perKey = new SharedLimit('key', limits.perKeyPerMinute, {
    ...shared,
    sweeps: false,
    block: Math.max(1, Math.floor(limits.perKeyPerMinute / 100)),
  });
  // Hosted pages count failures and uses apart: a colleague's mistyped links behind the same
  // address must not lock a person out of a real one, and a flood of one real link is that link's
  // alone.
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
              'failed_auth',
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
            'key',
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
        'pages',
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
