import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { derivedKey } from '../../activities/approvals/link-token.js';
import { ATTEMPT_TTL_SECONDS } from '../../activities/oauth/authorization-url.js';
import type { Keyring } from '../../infra/encryption.js';

/**
 * The credential page's form is bound to the browser it was shown to, as an OAuth attempt is:
 * showing the page sets an attempt cookie (attempt-cookie.ts, HttpOnly, SameSite=Lax, path
 * /connect) whose secret only that browser holds, and the form carries the cookie's reference,
 * when it was shown, and an HMAC of both with the link token and the cookie's secret, under a key
 * derived for this purpose. A post is taken only with the cookie that HMAC was made for, within
 * the attempt's 15 minutes: a form forged on another site (no cookie: Lax; no HMAC: it cannot read
 * the page) or sent from another browser (no cookie) stores nothing. Nothing is stored until the
 * form is posted, so showing the page costs no row.
 */
export interface CredentialFormFields {
  /** The attempt cookie's reference (`gatehouse_connect_<attempt>`). */
  attempt: string;
  /** When the page was shown, in seconds since the epoch. */
  issued: string;
  csrf: string;
}

const PURPOSE = 'connect-credential-form';

function mac(
  keyring: Keyring,
  keyId: string,
  linkToken: string,
  attempt: string,
  issued: string,
  cookieSecret: string,
): string {
  const secretHash = createHash('sha256').update(cookieSecret, 'utf8').digest('base64url');
  return createHmac('sha256', derivedKey(keyring, PURPOSE, keyId))
    .update(`${linkToken}\n${attempt}\n${issued}\n${secretHash}`, 'utf8')
    .digest('base64url');
}

/** The hidden fields of a page shown now to the browser holding `binding`'s cookie. */
export function credentialFormFields(
  keyring: Keyring,
  linkToken: string,
  binding: { ref: string; secret: string },
  now = new Date(),
): CredentialFormFields {
  const issued = String(Math.floor(now.getTime() / 1000));
  return {
    attempt: binding.ref,
    issued,
    csrf: mac(keyring, keyring.current.id, linkToken, binding.ref, issued, binding.secret),
  };
}

/** Attempt references are 12 random bytes, base64url (attempt-cookie.ts). */
export const ATTEMPT_REF = /^[A-Za-z0-9_-]{16}$/;

export type FormCheck = 'ok' | 'form_invalid' | 'attempt_expired';

/**
 * Whether a posted form is the one shown to this browser (its cookie's secret given) for this
 * link, recently. A field made under a key retired by a rotation since is still taken.
 */
export function checkCredentialForm(
  keyring: Keyring,
  linkToken: string,
  form: Record<string, unknown>,
  cookieSecret: string | undefined,
  now = new Date(),
): FormCheck {
  const { attempt, issued, csrf } = form;
  if (typeof attempt !== 'string' || typeof issued !== 'string' || typeof csrf !== 'string') {
    return 'form_invalid';
  }
  if (!ATTEMPT_REF.test(attempt) || !/^\d{1,12}$/.test(issued) || cookieSecret === undefined) {
    return 'form_invalid';
  }
  const given = Buffer.from(csrf, 'utf8');
  const matches = [keyring.current.id, ...Object.keys(keyring.previous ?? {})].some((keyId) => {
    const expected = Buffer.from(mac(keyring, keyId, linkToken, attempt, issued, cookieSecret));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!matches) return 'form_invalid';
  const age = now.getTime() / 1000 - Number(issued);
  // A page "shown" in the future was not shown by this service's clock: refused like a forgery.
  if (age < -60) return 'form_invalid';
  return age > ATTEMPT_TTL_SECONDS ? 'attempt_expired' : 'ok';
}
