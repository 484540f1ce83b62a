import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../infra/database/client.js';
import { claimSlackRequestSignature } from '../../activities/db/slack-request-signatures.js';

/**
 * Whether a request to Gatehouse's Slack interactivity endpoint came from Slack, per Slack's
 * "Verifying requests from Slack" (docs.slack.dev/authentication/verifying-requests-from-slack),
 * restated:
 *
 * - Slack sends `X-Slack-Request-Timestamp` (Unix seconds) and `X-Slack-Signature`, which is the
 *   version `v0`, `=`, and the hex HMAC-SHA256, keyed with the app's signing secret, of the base
 *   string `v0:<timestamp>:<raw body>`.
 * - The body must be the bytes as they arrived, before any parsing: a form re-encoded, or JSON
 *   re-serialised, is other bytes.
 * - The comparison must not leak, through its timing, how much of a guess was right.
 * - A request whose timestamp is more than five minutes from the receiver's clock is to be
 *   ignored: a captured request cannot be replayed later. Slack's own example takes the absolute
 *   difference, so a timestamp five minutes ahead is refused too.
 *
 * Within those five minutes a captured request could still be sent again; Slack's scheme does not
 * stop that, so Gatehouse also refuses a signature it has already accepted
 * (`acceptSlackRequest`). That record is in Postgres, since an API process cannot see what
 * another process has accepted.
 */

export const SLACK_TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

export interface SlackSignedRequest {
  /** The body exactly as received. */
  rawBody: Buffer;
  /** `X-Slack-Request-Timestamp`, absent when the request had none. */
  timestamp: string | undefined;
  /** `X-Slack-Signature`. */
  signature: string | undefined;
}

export type SlackSignatureRefusal =
  /** A header is missing (or empty). */
  | 'missing_headers'
  /** The timestamp is not Unix seconds. */
  | 'malformed_timestamp'
  /** Older than the tolerance allows. */
  | 'stale_timestamp'
  /** Later than the tolerance allows. */
  | 'future_timestamp'
  /** Not `v0=` and 64 hex digits: another scheme version, or not a signature at all. */
  | 'malformed_signature'
  /** Well-formed, and not the signing secret's signature of this timestamp and body. */
  | 'bad_signature'
  /** The very signature of a request already accepted. */
  | 'replayed';

export type SlackSignatureCheck =
  | { ok: true; timestampSeconds: number; signature: string }
  | { ok: false; refusal: SlackSignatureRefusal };

const TIMESTAMP = /^[0-9]{1,12}$/;
/** Slack writes the digest in lower-case hex. */
const SIGNATURE = /^v0=([0-9a-f]{64})$/;

/**
 * Slack's checks, pure: the headers, the timestamp within the tolerance of `now`, and the
 * signature over the raw body compared in constant time.
 */
export function checkSlackSignature(
  request: SlackSignedRequest,
  signingSecret: string,
  now: Date,
): SlackSignatureCheck {
  const { timestamp, signature } = request;
  if (!timestamp || !signature) return { ok: false, refusal: 'missing_headers' };
  if (!TIMESTAMP.test(timestamp)) return { ok: false, refusal: 'malformed_timestamp' };
  const timestampSeconds = Number(timestamp);
  const ageSeconds = Math.floor(now.getTime() / 1000) - timestampSeconds;
  if (ageSeconds > SLACK_TIMESTAMP_TOLERANCE_SECONDS) {
    return { ok: false, refusal: 'stale_timestamp' };
  }
  if (-ageSeconds > SLACK_TIMESTAMP_TOLERANCE_SECONDS) {
    return { ok: false, refusal: 'future_timestamp' };
  }
  const given = SIGNATURE.exec(signature)?.[1];
  if (!given) return { ok: false, refusal: 'malformed_signature' };
  const expected = createHmac('sha256', signingSecret)
    .update(`v0:${timestamp}:`, 'utf8')
    .update(request.rawBody)
    .digest();
  // Both are 32 bytes, so timingSafeEqual compares them whole whatever they hold.
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) {
    return { ok: false, refusal: 'bad_signature' };
  }
  return { ok: true, timestampSeconds, signature };
}

/**
 * Slack's checks, then the replay check: the signature is claimed in Postgres until its timestamp
 * leaves the tolerance, and a second request with the same signature (the same timestamp and
 * body: a copy) is refused as `replayed`, whichever API process it reaches.
 */
export async function acceptSlackRequest(
  sql: Db,
  request: SlackSignedRequest,
  signingSecret: string,
  now: Date = new Date(),
): Promise<SlackSignatureCheck> {
  const check = checkSlackSignature(request, signingSecret, now);
  if (!check.ok) return check;
  const keepUntil = new Date((check.timestampSeconds + SLACK_TIMESTAMP_TOLERANCE_SECONDS) * 1000);
  const claimed = await claimSlackRequestSignature(sql, check.signature, keepUntil, now);
  return claimed ? check : { ok: false, refusal: 'replayed' };
}
