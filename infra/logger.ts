import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Field names that may carry a secret anywhere in a log object. pino's redaction matches exact
 * paths, so each name is listed at the depths where request logs and our own objects put them.
 */
const secretFields = [
  'authorization',
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

export type { Logger };

export function createLogger(
  options: { level: string; name?: string },
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      level: options.level,
      name: options.name ?? 'gatehouse',
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
