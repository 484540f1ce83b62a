import { randomBytes } from 'node:crypto';
import type { CookieOptions, Request, Response } from 'express';
import type { BrowserBinding } from '../../activities/db/oauth-attempts.js';
import { ATTEMPT_TTL_SECONDS } from '../../activities/oauth/authorization-url.js';
import type { Config } from '../../infra/config.js';

/**
 * Each OAuth attempt is bound to the browser that started it: `/start` sets a cookie whose value
 * only that browser holds, and the callback refuses the app's answer without it. So an authorize
 * URL sent to someone else cannot attach their account to the sender's user.
 *
 * One cookie per attempt, named after a random reference stored with the attempt
 * (`gatehouse_connect_<ref>`): two tabs, or two apps, connecting at once in one browser each
 * keep their own, and an attempt never overwrites another's. Each lives as long as its attempt
 * (15 minutes) and is cleared when the attempt ends, so they do not pile up.
 */
const COOKIE_PREFIX = 'gatehouse_connect_';

export function newBrowserBinding(): BrowserBinding {
  return {
    ref: randomBytes(12).toString('base64url'),
    secret: randomBytes(32).toString('base64url'),
  };
}

/**
 * Lax, not Strict: the callback is a top-level navigation from the app's site, which Strict
 * would strip the cookie from. Scoped to the connect pages below PUBLIC_URL's own path.
 */
export function attemptCookieOptions(config: Pick<Config, 'api'>): CookieOptions {
  const publicUrl = new URL(config.api.publicUrl);
  return {
    httpOnly: true,
    secure: publicUrl.protocol === 'https:',
    sameSite: 'lax',
    path: `${publicUrl.pathname.replace(/\/+$/, '')}/connect`,
  };
}

const cookieName = (ref: string) => `${COOKIE_PREFIX}${ref}`;

export function setAttemptCookie(
  res: Response,
  config: Pick<Config, 'api'>,
  binding: BrowserBinding,
): void {
  res.cookie(cookieName(binding.ref), binding.secret, {
    ...attemptCookieOptions(config),
    maxAge: ATTEMPT_TTL_SECONDS * 1000,
  });
}

export function clearAttemptCookie(res: Response, config: Pick<Config, 'api'>, ref: string): void {
  res.clearCookie(cookieName(ref), attemptCookieOptions(config));
}

/** The value the browser sent for the attempt's cookie, if any. */
export function attemptCookieValue(req: Request, ref: string): string | undefined {
  const name = cookieName(ref);
  for (const pair of (req.get('cookie') ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}
