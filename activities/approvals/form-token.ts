import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../../infra/encryption.js';
import { derivedKey } from './link-token.js';

/**
 * The hidden field of the approval page's form: an HMAC bound to the link token. Only a page
 * this service rendered for that link carries it, so a form forged on another site cannot post
 * a decision, even by someone who learned the link (they could not read the page across sites).
 */
export function formToken(keyring: Keyring, linkToken: string, keyId = keyring.current.id): string {
  return createHmac('sha256', derivedKey(keyring, 'approval-page-form', keyId))
    .update(linkToken, 'utf8')
    .digest('base64url');
}

/** Also accepts a field made under a key retired by a rotation since the page was shown. */
export function formTokenMatches(keyring: Keyring, linkToken: string, field: unknown): boolean {
  if (typeof field !== 'string') return false;
  const given = Buffer.from(field, 'utf8');
  return [keyring.current.id, ...Object.keys(keyring.previous ?? {})].some((keyId) => {
    const expected = Buffer.from(formToken(keyring, linkToken, keyId), 'utf8');
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}
