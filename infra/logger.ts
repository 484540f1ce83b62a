import { pino, type DestinationStream, type Logger } from 'pino';

export const CENSOR = '[redacted]';

/**
 * Field names that may carry a secret anywhere in a log object. pino's redaction matches exact
 * paths, so each name is listed at the depths where request logs and our own objects put them.
 * These paths are the second net: `censorSecrets` below is the first, and it ignores case.
 */
const secretFields = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'idToken',
  'id_token',
  'apiKey',
  'api_key',
  'key',
  'token',
  'code_verifier',
  'codeVerifier',
  'encryptionKey',
];

const prefixes = [
  '',
  '*.',
  '*.*.',
  'req.headers.',
  'res.headers.',
  'req.body.',
  'err.config.headers.',
];

export const redactPaths = prefixes.flatMap((prefix) =>
  secretFields.map((field) =>
    /^[A-Za-z_][\w]*$/.test(field) ? `${prefix}${field}` : `${prefix}["${field}"]`,
  ),
);

/** `clientSecret`, `client_secret`, `Client-Secret` all name the same field. */
const normalise = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

const secretFieldNames: ReadonlySet<string> = new Set(secretFields.map(normalise));

/** Headers that carry a credential by definition, named so that a reader sees the intent. */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
]);

/**
 * Any other header whose name says it carries a credential: apps and proxies invent their own
 * (`X-Auth-Token`, `X-Amz-Security-Token`, `X-Goog-Api-Key`, `X-CSRF-Token`, a session id), and a
 * list can never name them all. `Idempotency-Key` and the like stay readable.
 */
const CREDENTIAL_HEADER_PATTERN =
  /auth|token|secret|passw|api-?key|cookie|session|credential|signature/i;

export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_HEADER_PATTERN.test(lower);
}

/**
 * Headers as they may be logged: names in lower case (HTTP header names are case-insensitive,
 * pino's redaction paths are not), credential values replaced by the censor.
 */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    out[lower] = value === undefined ? value : isCredentialHeader(lower) ? CENSOR : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

const MAX_DEPTH = 8;

/**
 * A copy of a log object with every secret field censored, whatever the case or spelling of its
 * name, at any depth, and every `headers` object passed through `redactHeaders`. Only plain
 * objects and arrays are walked: requests, responses and errors have serializers of their own,
 * which call this on what they produce.
 */
export function censorSecrets(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) {
    return depth >= MAX_DEPTH ? '[too deep]' : value.map((item) => censorSecrets(item, depth + 1));
  }
  if (!isPlainObject(value)) return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (secretFieldNames.has(normalise(name))) out[name] = CENSOR;
    else if (name.toLowerCase() === 'headers' && isPlainObject(field)) {
      out[name] = redactHeaders(field);
    } else out[name] = censorSecrets(field, depth + 1);
  }
  return out;
}

/** pino's error serializer, with what it copies from the error censored like any log object. */
export function serializeError(error: Error): unknown {
  return censorSecrets(pino.stdSerializers.err(error));
}

export type { Logger };

export function createLogger(
  options: { level: string; name?: string },
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level: options.level,
      name: options.name ?? 'gatehouse',
      redact: { paths: redactPaths, censor: CENSOR },
      serializers: { err: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => censorSecrets(object) as Record<string, unknown>,
      },
    },
    destination,
  );
}
