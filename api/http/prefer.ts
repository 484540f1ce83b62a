import type { Request, Response } from 'express';
import { z } from 'zod';

/**
 * RFC 7240 `Prefer: wait=<seconds>`: how long a caller is willing to wait for a held call's
 * decision, or for an approval to be decided. A preference is a hint: one that does not parse is
 * ignored, as the RFC asks, never refused. Several `Prefer` headers, or several preferences in one,
 * are read alike; the first `wait` counts.
 */
export function preferredWaitSeconds(req: Request): number | null {
  const header = req.headers.prefer;
  if (header === undefined) return null;
  const values = Array.isArray(header) ? header : [header];
  for (const preference of values.flatMap((value) => value.split(','))) {
    // Parameters after `;` belong to the preference; `wait` takes none.
    const [token = ''] = preference.split(';');
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*$/i.exec(token);
    if (match?.[1] !== undefined) return Number(match[1]);
  }
  return null;
}

/** The wait honoured: the caller's, at most `maxSeconds`; null when none was asked or allowed. */
export function honouredWaitSeconds(req: Request, maxSeconds: number): number | null {
  const asked = preferredWaitSeconds(req);
  if (asked === null || asked === 0 || maxSeconds <= 0) return null;
  return Math.min(asked, maxSeconds);
}

/** Says which wait was honoured (RFC 7240 §3), and that the answer depends on `Prefer`. */
export function applyWaitPreference(res: Response, seconds: number | null): void {
  res.vary('Prefer');
  if (seconds !== null) res.setHeader('Preference-Applied', `wait=${String(seconds)}`);
}

/**
 * A `Prefer` header as the proxy passes it to the app: `wait` is Gatehouse's (it also must not
 * change the call's identity between a caller's retries); any other preference is the app's,
 * e.g. PostgREST's `return=representation`. Null when nothing is left.
 */
export function preferForApp(value: string): string | null {
  const kept = value
    .split(',')
    .map((preference) => preference.trim())
    .filter((preference) => preference !== '' && !/^wait\s*(=|;|$)/i.test(preference));
  return kept.length === 0 ? null : kept.join(', ');
}

/** The header as the OpenAPI documents describe it, for the operations that honour it. */
export const preferHeader = z.string().max(500).optional().meta({
  description:
    '`wait=<seconds>` (RFC 7240): when the call is held for approval, answer once it is decided (the approved call’s result, run once, or 403 `denied_by_policy` on rejection) or when the wait ends (403 `approval_required`), instead of at once. At most PREFER_WAIT_MAX_SECONDS (default 60); `Preference-Applied` says the wait honoured. Other preferences are ignored here (the proxy passes them on to the app).',
  example: 'wait=30',
});
