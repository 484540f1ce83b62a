import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/** The Ed25519 key that signs audit checkpoints (AUDIT_SIGNING_KEY), and the id it signs under. */
export interface AuditSigningKey {
  id: string;
  privateKey: KeyObject;
  /** SPKI PEM: what `audit_signing_keys` and `verify --public-keys` hold. */
  publicKeyPem: string;
}

/** DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Reads AUDIT_SIGNING_KEY: a PKCS#8 PEM (`openssl genpkey -algorithm ed25519`) or the 32-byte
 * seed in base64. Throws a message fit for a ConfigError.
 */
export function parseAuditSigningKey(text: string, id: string): AuditSigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = text.includes('-----BEGIN')
      ? createPrivateKey(text)
      : createPrivateKey({
          key: Buffer.concat([PKCS8_ED25519_PREFIX, seed(text)]),
          format: 'der',
          type: 'pkcs8',
        });
  } catch (error) {
    throw new Error(`not an Ed25519 private key (${(error as Error).message})`, { cause: error });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new Error(`must be an Ed25519 key, not ${String(privateKey.asymmetricKeyType)}`);
  }
  const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' });
  return { id, privateKey, publicKeyPem: publicKeyPem.toString() };
}

function seed(base64: string): Buffer {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length !== 32) throw new Error('a base64 seed must be 32 bytes');
  return bytes;
}
