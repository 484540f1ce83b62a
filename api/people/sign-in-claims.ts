import type { SignedInClaims } from '../../activities/db/people.js';
import type { OidcSettings } from '../../infra/config.js';

/** The longest name, email or group kept from a provider's claims. */
const MAX_CLAIM_LENGTH = 200;
/** The most groups read from one person's claim; a provider sending more is cut here. */
const MAX_GROUPS = 200;

export type ClaimsReading =
  | { ok: true; claims: SignedInClaims }
  | { ok: false; reason: 'email_missing' | 'email_unverified' | 'email_domain'; email?: string };

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_CLAIM_LENGTH ? value : null;

/**
 * Who signed in, from the ID token's claims. A person needs an email the provider has not said is
 * unverified (providers that never send `email_verified` vouch for it by sending it at all), in
 * one of the allowed domains when some are set. Groups come from the configured claim: an array of
 * strings (Okta, Entra, Keycloak), or one string; anything else there counts as no groups.
 */
export function readSignInClaims(
  claims: Record<string, unknown>,
  settings: Pick<OidcSettings, 'groupsClaim' | 'allowedEmailDomains'>,
): ClaimsReading {
  const email = text(claims.email)?.toLowerCase() ?? null;
  if (email === null || !/^[^@\s]+@[^@\s]+$/.test(email))
    return { ok: false, reason: 'email_missing' };
  if (claims.email_verified === false) return { ok: false, reason: 'email_unverified', email };
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (settings.allowedEmailDomains.length > 0 && !settings.allowedEmailDomains.includes(domain)) {
    return { ok: false, reason: 'email_domain', email };
  }
  const raw = claims[settings.groupsClaim];
  const listed = Array.isArray(raw) ? (raw as unknown[]) : typeof raw === 'string' ? [raw] : [];
  const groups = [
    ...new Set(listed.map(text).filter((group): group is string => group !== null)),
  ].slice(0, MAX_GROUPS);
  return {
    ok: true,
    claims: {
      issuer: String(claims.iss),
      subject: String(claims.sub),
      email,
      name: text(claims.name) ?? email,
      groups,
    },
  };
}
