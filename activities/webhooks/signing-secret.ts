import { randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing secrets: `whsec_` and the base64 of the HMAC key. Any Standard
 * Webhooks library takes this form as it is, so a receiver pastes it unchanged.
 */
export const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/=]{32,}$/;

const SECRET_BYTES = 32;
const MIN_SECRET_BYTES = 24;
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The pattern alone lets through misplaced padding and keys short of 24 bytes. */
export function isStrongWebhookSecret(secret: string): boolean {
  if (!WEBHOOK_SECRET_PATTERN.test(secret)) return false;
  const encoded = secret.slice('whsec_'.length);
  return (
    CANONICAL_BASE64.test(encoded) && Buffer.from(encoded, 'base64').length >= MIN_SECRET_BYTES
  );
}

export const WEBHOOK_SECRET_RULE =
  'must be whsec_ followed by the base64 of at least 24 random bytes';
