import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConsoleSession } from '../../activities/db/console-sessions.js';

/**
 * The console's CSRF token: an HMAC of the session's id under the session's own secret, so it
 * is worthless outside that session and ends with it. Every state-changing form carries it; a
 * POST without it, or with another session's, changes nothing (SameSite=Lax already keeps other
 * sites' forms from carrying the cookie; this holds for browsers that do not).
 */
export function consoleFormToken(session: Pick<ConsoleSession, 'id' | 'csrfSecret'>): string {
  return createHmac('sha256', session.csrfSecret)
    .update(`console-form\0${session.id}`)
    .digest('base64url');
}

export function consoleFormTokenMatches(
  session: Pick<ConsoleSession, 'id' | 'csrfSecret'>,
  given: unknown,
): boolean {
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(consoleFormToken(session));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
