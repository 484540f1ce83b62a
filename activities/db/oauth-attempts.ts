import { timingSafeEqual } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';
import { hashToken } from './connect-links.js';

export interface OAuthAttempt {
  id: string;
  linkId: string;
  expiresAt: Date;
  consumedAt: Date | null;
  /** Names the cookie of the browser that started the attempt; null before migration 012. */
  browserRef: string | null;
  browserSecretHash: Buffer | null;
}

/** What binds an attempt to a browser: the cookie's name part and its secret value. */
export interface BrowserBinding {
  ref: string;
  secret: string;
}

const attemptColumns = (sql: Db) =>
  sql`id, link_id, expires_at, consumed_at, browser_ref, browser_secret_hash`;

const verifierAad = (id: string) => `oauth_attempt:${id}:code_verifier`;
const callbackAad = (id: string) => `oauth_attempt:${id}:callback`;

/** What an attempt keeps of its browser's binding: the cookie's name part and its value's hash. */
export interface StoredBinding {
  ref: string;
  secretHash: Buffer;
}

export function storedBinding(binding: BrowserBinding): StoredBinding {
  return { ref: binding.ref, secretHash: hashToken(binding.secret) };
}

export async function createOAuthAttempt(
  sql: Db,
  keyring: Keyring,
  input: {
    /** Given when the caller names the attempt first (an MCP app's start workflow). */
    id?: string;
    linkId: string;
    state: string;
    codeVerifier: string;
    browser: StoredBinding;
    ttlSeconds: number;
  },
): Promise<OAuthAttempt> {
  const id = input.id ?? uuidv7();
  const [row]: [OAuthAttempt?] = await sql`
    insert into oauth_attempts (id, link_id, state_hash, code_verifier_sealed, browser_ref,
      browser_secret_hash, expires_at)
    values (${id}, ${input.linkId}, ${hashToken(input.state)}, ${seal(keyring, input.codeVerifier, verifierAad(id))},
      ${input.browser.ref}, ${input.browser.secretHash}, now() + make_interval(secs => ${input.ttlSeconds}))
    returning ${attemptColumns(sql)}`;
  if (!row) throw new Error('oauth attempt insert returned nothing');
  return row;
}

export async function findAttemptByState(sql: Db, state: string): Promise<OAuthAttempt | null> {
  const [row]: [OAuthAttempt?] = await sql`
    select ${attemptColumns(sql)} from oauth_attempts where state_hash = ${hashToken(state)}`;
  return row ?? null;
}

/**
 * Whether `secret` (the value of the attempt's cookie, if the browser sent one) is the one the
 * attempt was started with. Compared as hashes in constant time.
 */
export function isBoundTo(attempt: OAuthAttempt, secret: string | undefined): boolean {
  if (secret === undefined || !attempt.browserSecretHash) return false;
  return timingSafeEqual(hashToken(secret), attempt.browserSecretHash);
}

/** Parks the callback's query (it holds the authorization code) for the exchange activity. */
export async function parkCallback(
  sql: Db,
  keyring: Keyring,
  id: string,
  query: string,
): Promise<boolean> {
  const rows = await sql`
    update oauth_attempts set callback_params_sealed = ${seal(keyring, query, callbackAad(id))}
    where id = ${id} and consumed_at is null and callback_params_sealed is null
    returning id`;
  return rows.length === 1;
}

export async function readAttemptSecrets(
  sql: Db,
  keyring: Keyring,
  id: string,
): Promise<{ codeVerifier: string; callbackQuery: string } | null> {
  const [row]: [{ codeVerifierSealed: string; callbackParamsSealed: string | null }?] = await sql`
    select code_verifier_sealed, callback_params_sealed from oauth_attempts where id = ${id} and consumed_at is null`;
  if (!row?.callbackParamsSealed) return null;
  return {
    codeVerifier: open(keyring, row.codeVerifierSealed, verifierAad(id)),
    callbackQuery: open(keyring, row.callbackParamsSealed, callbackAad(id)),
  };
}

/** Burns the attempt and its secrets, whatever the outcome: a code is good for one exchange. */
export async function consumeAttempt(sql: Db, id: string): Promise<void> {
  await sql`
    update oauth_attempts set consumed_at = now(), code_verifier_sealed = '', callback_params_sealed = null
    where id = ${id}`;
}
