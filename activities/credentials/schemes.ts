/**
 * Credentials an end user enters on the hosted connect page, for apps that take no OAuth grant:
 * an API key (in a header or the query), an HTTP bearer token, or an HTTP basic username and
 * password. This file holds their shapes and the checks every one passes before it is sealed or
 * sent: pure functions, no I/O, so the API (which checks what the page posted) and the activity
 * (which presents it to the app) judge them alike.
 */

/** How an app takes the credential: declared per app, copied to each connection made with it. */
export type CredentialScheme =
  | { scheme: 'api_key'; in: 'header' | 'query'; name: string }
  | { scheme: 'bearer' }
  | { scheme: 'basic' };

/** The secret itself, by scheme. Never logged, audited, put in Temporal or answered but by export. */
export type CredentialSecret =
  | { scheme: 'api_key'; key: string }
  | { scheme: 'bearer'; token: string }
  | { scheme: 'basic'; username: string; password: string };

/**
 * The most a secret may take, in UTF-8 bytes (a username and password together). Real API keys
 * and tokens are well under 1 KiB; JWTs with many claims reach 2–3 KiB. More is a paste gone wrong.
 */
export const MAX_SECRET_BYTES = 4096;

// RFC 9110 §5.6.2 token: what a header field name may be.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/**
 * Headers that frame the message or steer the connection: a key sent in one of them would
 * corrupt the request or be dropped on the way. `Authorization` stays allowed, as some APIs
 * take a bare key there.
 */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'content-type',
  'cookie',
  'host',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

// Visible ASCII: what API keys and bearer tokens are made of, and all a header value may safely
// carry. No space, tab, CR or LF, so nothing typed can end a header or start another.
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why a declaration cannot be used, or null when it can. */
export function schemeProblem(scheme: CredentialScheme): string | null {
  if (scheme.scheme !== 'api_key') return null;
  if (scheme.in === 'header') {
    if (!HEADER_NAME.test(scheme.name)) return `"${scheme.name}" is not an HTTP header name`;
    if (RESERVED_HEADERS.has(scheme.name.toLowerCase())) {
      return `the ${scheme.name} header cannot carry a key`;
    }
    return null;
  }
  if (scheme.name.length < 1 || scheme.name.length > 100 || CONTROL.test(scheme.name)) {
    return 'a query parameter name is 1–100 characters without control characters';
  }
  return null;
}

/** A field of the page that is wrong, and what the user reads about it. */
export interface SecretProblem {
  field: 'secret' | 'username' | 'password';
  message: string;
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function tokenProblem(value: string, what: string): SecretProblem | null {
  if (value === '') return { field: 'secret', message: `Enter your ${what}.` };
  if (bytes(value) > MAX_SECRET_BYTES) {
    return {
      field: 'secret',
      message: `This ${what} is too long (more than ${MAX_SECRET_BYTES} bytes). Check that you pasted only the ${what}.`,
    };
  }
  if (!VISIBLE_ASCII.test(value)) {
    return {
      field: 'secret',
      message: `The ${what} may contain only letters, digits and punctuation: no spaces, line breaks or other characters. Check that you pasted only the ${what}.`,
    };
  }
  return null;
}

/**
 * What the page posted, as a secret of the declared scheme, or the first field that is wrong.
 * Spaces around a pasted key or token are dropped (a copy often brings them); anything else is
 * taken as typed or refused, never altered.
 */
export function secretFromForm(
  scheme: CredentialScheme,
  form: { secret?: unknown; username?: unknown; password?: unknown },
): { secret: CredentialSecret } | { problem: SecretProblem } {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  if (scheme.scheme === 'basic') {
    const username = text(form.username);
    const password = text(form.password);
    if (username === '') return { problem: { field: 'username', message: 'Enter your username.' } };
    if (bytes(username) + bytes(password) + 1 > MAX_SECRET_BYTES) {
      return {
        problem: {
          field: 'password',
          message: `The username and password are too long together (more than ${MAX_SECRET_BYTES} bytes).`,
        },
      };
    }
    // RFC 7617 §2: the user-id cannot hold a colon, which separates it from the password.
    if (username.includes(':') || CONTROL.test(username)) {
      return {
        problem: {
          field: 'username',
          message: 'The username may not contain a colon, line breaks or other control characters.',
        },
      };
    }
    if (CONTROL.test(password)) {
      return {
        problem: {
          field: 'password',
          message: 'The password may not contain line breaks or other control characters.',
        },
      };
    }
    return { secret: { scheme: 'basic', username, password } };
  }
  const value = text(form.secret).replace(/^ +| +$/g, '');
  const what = scheme.scheme === 'bearer' ? 'access token' : 'API key';
  const problem = tokenProblem(value, what);
  if (problem) return { problem };
  return scheme.scheme === 'bearer'
    ? { secret: { scheme: 'bearer', token: value } }
    : { secret: { scheme: 'api_key', key: value } };
}

/** A stored secret still passes the page's checks (a row edited by hand is not sent as it is). */
export function secretProblem(secret: CredentialSecret): SecretProblem | null {
  if (secret.scheme === 'basic') {
    const checked = secretFromForm(secret, secret);
    return 'problem' in checked ? checked.problem : null;
  }
  const value = secret.scheme === 'bearer' ? secret.token : secret.key;
  return tokenProblem(value, secret.scheme === 'bearer' ? 'access token' : 'API key');
}
