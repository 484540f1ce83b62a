import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isRecord, type Store } from './store.js';

export interface ProviderSecrets {
  cookieKeys: string[];
  jwks: { keys: object[] };
}

/**
 * Cookie-signing keys and the ID-token signing key. They are generated on first start and kept in
 * the store, so with a data directory the sessions and signatures of a previous run stay valid;
 * nothing secret is committed to the repository.
 */
export async function loadOrCreateSecrets(store: Store): Promise<ProviderSecrets> {
  const secrets = store.collection('secrets', (raw) => (isRecord(raw) ? raw : undefined));
  const storedKey = secrets.entries.get('cookieKey')?.['value'];
  const storedSigningKey = secrets.entries.get('signingKey');
  if (typeof storedKey === 'string' && storedSigningKey !== undefined) {
    return { cookieKeys: [storedKey], jwks: { keys: [storedSigningKey] } };
  }
  const cookieKey = randomBytes(32).toString('base64url');
  const signingKey = generateSigningKey();
  secrets.entries.set('cookieKey', { value: cookieKey });
  secrets.entries.set('signingKey', signingKey);
  await secrets.save();
  return { cookieKeys: [cookieKey], jwks: { keys: [signingKey] } };
}

function generateSigningKey(): Record<string, unknown> {
  // RS256 because it is oidc-provider's default id_token_signed_response_alg for clients.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...privateKey.export({ format: 'jwk' }),
    kid: randomBytes(8).toString('hex'),
    use: 'sig',
    alg: 'RS256',
  };
}
