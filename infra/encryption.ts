import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for tokens and client secrets at rest. A sealed value is one string,
 * `v1.<keyId>.<base64url(iv | ciphertext | tag)>`, so a key can be rotated by adding a new key id
 * while old values stay readable. The associated data binds a value to where it is stored
 * (e.g. `auth_config:<id>:client_secret`): a ciphertext copied to another row does not open.
 */
export interface Keyring {
  current: { id: string; key: Buffer };
  /** Older keys still able to open values sealed before a rotation. */
  previous?: Record<string, Buffer>;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function seal(keyring: Keyring, plaintext: string, associatedData: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const packed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  return `v1.${keyring.current.id}.${packed}`;
}

export function open(keyring: Keyring, sealed: string, associatedData: string): string {
  const [version, keyId, packed] = sealed.split('.');
  if (version !== 'v1' || !keyId || !packed) throw new Error('unrecognised sealed value');
  const key = keyId === keyring.current.id ? keyring.current.key : keyring.previous?.[keyId];
  if (!key) throw new Error(`no encryption key with id "${keyId}"`);
  const raw = Buffer.from(packed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}
