import { createHash } from 'node:crypto';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

/**
 * A sign-in under way between the redirect to the identity provider and its callback. The state
 * the provider sends back finds it (only its hash is kept); the PKCE verifier and the nonce stay
 * sealed at rest, as every secret here does. One use: the callback deletes the row it reads.
 */
export const SIGN_IN_TTL_SECONDS = 10 * 60;

export interface SignInSecrets {
  codeVerifier: string;
  nonce: string;
}

export interface SignInAttempt extends SignInSecrets {
  environmentId: string;
  returnTo: string;
}

const hashState = (state: string): Buffer => createHash('sha256').update(state, 'utf8').digest();
const AAD = 'sign-in-attempt';

export async function createSignInAttempt(
  sql: Db,
  keyring: Keyring,
  state: string,
  attempt: SignInAttempt,
): Promise<void> {
  const sealed = seal(
    keyring,
    JSON.stringify({ codeVerifier: attempt.codeVerifier, nonce: attempt.nonce }),
    AAD,
  );
  await sql`
    insert into sign_in_attempts (state_hash, environment_id, sealed_verifier, return_to, expires_at)
    values (${hashState(state)}, ${attempt.environmentId}, ${sealed}, ${attempt.returnTo},
      now() + make_interval(secs => ${SIGN_IN_TTL_SECONDS}))`;
}

/** Takes the attempt this state names (deleting it, so a callback replayed finds nothing). */
export async function takeSignInAttempt(
  sql: Db,
  keyring: Keyring,
  state: string,
): Promise<SignInAttempt | null> {
  const [row]: [{ environmentId: string; sealedVerifier: string; returnTo: string }?] = await sql`
    delete from sign_in_attempts
    where state_hash = ${hashState(state)} and expires_at > now()
    returning environment_id, sealed_verifier, return_to`;
  // Abandoned attempts go with whichever sign-in comes next.
  await sql`delete from sign_in_attempts where expires_at <= now()`;
  if (!row) return null;
  const secrets = JSON.parse(open(keyring, row.sealedVerifier, AAD)) as SignInSecrets;
  return { environmentId: row.environmentId, returnTo: row.returnTo, ...secrets };
}
