import type { Request, Response } from 'express';
import type { OAuthAttempt } from '../../activities/db/oauth-attempts.js';
import type { Config } from '../../infra/config.js';
import { open, seal } from '../../infra/encryption.js';
import { CONNECT_LINK_TTL_SECONDS } from './links.js';
import { attemptCookieOptions } from './attempt-cookie.js';

/**
 * Reloading the success page must show it again to the browser that connected, yet the callback's
 * state is spent, and anyone else holding that URL still gets "already used".
 * So a connected browser keeps a proof of it: the connection's id, sealed to the attempt (AES-GCM
 * with the attempt id as associated data), in `gatehouse_connected_<ref>` beside the attempt's
 * own cookie. It cannot be forged or moved to another attempt, and it names nothing secret.
 * It lives as long as a link would, then a reload says "already used" like any other.
 */
const COOKIE_PREFIX = 'gatehouse_connected_';

const cookieName = (ref: string) => `${COOKIE_PREFIX}${ref}`;
const proofAad = (attemptId: string) => `oauth_attempt:${attemptId}:connected`;

type ConnectedAttempt = Pick<OAuthAttempt, 'id'> & { browserRef: string };

export function setConnectedCookie(
  res: Response,
  config: Pick<Config, 'api' | 'encryption'>,
  attempt: ConnectedAttempt,
  connectionId: string,
): void {
  res.cookie(
    cookieName(attempt.browserRef),
    seal(config.encryption, connectionId, proofAad(attempt.id)),
    {
      ...attemptCookieOptions(config),
      maxAge: CONNECT_LINK_TTL_SECONDS * 1000,
    },
  );
}

/** The connection this browser made through the attempt, if it brings the proof; else null. */
export function connectedThrough(
  req: Request,
  config: Pick<Config, 'encryption'>,
  attempt: ConnectedAttempt,
): string | null {
  const name = cookieName(attempt.browserRef);
  for (const pair of (req.get('cookie') ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || pair.slice(0, eq).trim() !== name) continue;
    try {
      return open(
        config.encryption,
        decodeURIComponent(pair.slice(eq + 1).trim()),
        proofAad(attempt.id),
      );
    } catch {
      // Tampered, sealed for another attempt, or under a key no longer held: no proof.
      return null;
    }
  }
  return null;
}
