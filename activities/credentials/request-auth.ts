import type { Db } from '../../infra/database/client.js';
import type { Keyring } from '../../infra/encryption.js';
import { markConnectionExpired } from '../db/connections.js';
import { readCredential, type StoredCredential } from '../db/credential-connections.js';
import { schemeProblem, secretProblem } from './schemes.js';

/**
 * What to add to an outgoing request for a credential connection: headers and query parameters to
 * set, each replacing any of the same name the request already had (the input of a call never
 * overrides, nor doubles, the credential). The values are the secret: build the request
 * with them in the activity that sends it, and let them go nowhere else (no log, no return value,
 * no error message).
 */
export interface RequestAuth {
  headers: Record<string, string>;
  query: [name: string, value: string][];
}

/**
 * How the credential is presented: `X-Api-Key: <key>` (or the declared header) or `?<name>=<key>`
 * for an API key, `Authorization: Bearer <token>`, `Authorization: Basic base64(user:pass)` (the
 * UTF-8 bytes, RFC 7617 §2.1). A credential that fails the page's checks (a row edited by hand, a
 * declaration saved around `saveCredentialApp`) throws before anything is built from it.
 */
export function requestAuthOf(credential: StoredCredential): RequestAuth {
  const { scheme, secret } = credential;
  const problem = schemeProblem(scheme) ?? secretProblem(secret)?.message ?? null;
  if (problem !== null || secret.scheme !== scheme.scheme) {
    throw new Error(`the connection's credential cannot be sent (${problem ?? 'scheme mismatch'})`);
  }
  if (secret.scheme === 'basic') {
    const pair = Buffer.from(`${secret.username}:${secret.password}`, 'utf8').toString('base64');
    return { headers: { authorization: `Basic ${pair}` }, query: [] };
  }
  if (secret.scheme === 'bearer') {
    return { headers: { authorization: `Bearer ${secret.token}` }, query: [] };
  }
  if (scheme.scheme !== 'api_key') throw new Error('unreachable: scheme mismatch');
  return scheme.in === 'header'
    ? { headers: { [scheme.name.toLowerCase()]: secret.key }, query: [] }
    : { headers: {}, query: [[scheme.name, secret.key]] };
}

/** `RequestAuth` added to a URL and headers, for callers that build their request from both. */
export function withRequestAuth(
  url: URL,
  headers: Record<string, string>,
  auth: RequestAuth,
): { url: URL; headers: Record<string, string> } {
  const target = new URL(url.href);
  for (const [name, value] of auth.query) target.searchParams.set(name, value);
  const names = new Set(Object.keys(auth.headers));
  const kept = Object.fromEntries(
    Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())),
  );
  return { url: target, headers: { ...kept, ...auth.headers } };
}

/**
 * `RequestAuth` set on a request being built as Fetch `Headers` and `URLSearchParams` (the shape
 * of the OpenAPI call path's `credential` hook).
 */
export function applyRequestAuth(
  auth: RequestAuth,
  headers: Headers,
  query: URLSearchParams,
): void {
  for (const [name, value] of Object.entries(auth.headers)) headers.set(name, value);
  for (const [name, value] of auth.query) query.set(name, value);
}

export type CredentialForCall =
  | { kind: 'ready'; auth: RequestAuth }
  /** The connection is expired (needs the user's reconnect) or revoked, or holds no credential. */
  | { kind: 'unusable'; status: 'expired' | 'revoked' | 'missing' };

/**
 * For the activity that sends a call over a credential connection: what to add to the request,
 * read and opened at the last moment. Nothing is refreshed: the secret is used as the user
 * entered it until they enter another.
 */
export async function credentialForCall(
  sql: Db,
  keyring: Keyring,
  connectionId: string,
): Promise<CredentialForCall> {
  const [row]: [{ status: 'active' | 'expired' | 'revoked' }?] = await sql`
    select status from connections where id = ${connectionId} and auth_kind = 'credential'`;
  if (!row) return { kind: 'unusable', status: 'missing' };
  if (row.status !== 'active') return { kind: 'unusable', status: row.status };
  const credential = await readCredential(sql, keyring, connectionId);
  if (!credential) return { kind: 'unusable', status: 'missing' };
  return { kind: 'ready', auth: requestAuthOf(credential) };
}

/**
 * After the app answered a call made with the credential: a 401 says the app no longer takes it
 * (revoked or rotated at the app), and with no refresh to try, only the user can fix it. The
 * connection becomes `expired`, as an OAuth connection whose refresh token the app refused, so the
 * next call answers 409 `connection_expired` with a reconnect link. A 403 is the app refusing
 * this request, not the credential, and changes nothing. Returns whether it marked the connection.
 */
export async function noteCredentialAnswer(
  sql: Db,
  connectionId: string,
  upstreamStatus: number,
): Promise<boolean> {
  if (upstreamStatus !== 401) return false;
  await markConnectionExpired(sql, connectionId);
  return true;
}
