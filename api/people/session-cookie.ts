import type { CookieOptions, Request, Response } from 'express';
import type { Config } from '../../infra/config.js';

/**
 * The console's cookies. One session cookie per environment (`gatehouse_console_<environment>`),
 * since a session belongs to the environment it was signed in to and a person may work in two at
 * once. HttpOnly (no script reads it), SameSite=Lax (another site's form cannot carry it; a link
 * from an e-mail or chat still opens the console signed in), Secure whenever PUBLIC_URL is https
 * (config refuses sign-in over plain http outside loopback), then with the `__Secure-` prefix,
 * which browsers refuse to set without Secure. The path is PUBLIC_URL's own, so the hosted
 * approval page below it knows who is looking too.
 */
export function consoleCookieOptions(config: Pick<Config, 'api'>): CookieOptions {
  const url = new URL(config.api.publicUrl);
  return {
    httpOnly: true,
    secure: url.protocol === 'https:',
    sameSite: 'lax',
    path: `${url.pathname.replace(/\/+$/, '')}/`,
  };
}

const prefix = (config: Pick<Config, 'api'>) =>
  new URL(config.api.publicUrl).protocol === 'https:' ? '__Secure-' : '';

export const sessionCookieName = (config: Pick<Config, 'api'>, environment: string): string =>
  `${prefix(config)}gatehouse_console_${environment}`;

/** The sign-in under way in this browser: the state it must come back with. */
export const signInCookieName = (config: Pick<Config, 'api'>): string =>
  `${prefix(config)}gatehouse_sign_in`;

/**
 * Set by sign-out: the next sign-in from this browser asks the provider to sign the person in
 * again (`prompt=login`) rather than let its own session answer for them, so signing out of the
 * console on a shared computer is not undone by the next visitor's click.
 */
export const signedOutCookieName = (config: Pick<Config, 'api'>): string =>
  `${prefix(config)}gatehouse_signed_out`;

export function readCookie(req: Request, name: string): string | undefined {
  for (const pair of (req.get('cookie') ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

export function setSessionCookie(
  res: Response,
  config: Pick<Config, 'api' | 'people'>,
  environment: string,
  token: string,
): void {
  res.cookie(sessionCookieName(config, environment), token, {
    ...consoleCookieOptions(config),
    maxAge: config.people.session.absoluteSeconds * 1000,
  });
}

export function clearSessionCookie(
  res: Response,
  config: Pick<Config, 'api'>,
  environment: string,
): void {
  res.clearCookie(sessionCookieName(config, environment), consoleCookieOptions(config));
}
