import { z } from 'zod';
import type { Keyring } from './encryption.js';

/**
 * Every setting of Gatehouse, read once from the environment at start-up. A wrong or missing
 * value stops the process with a message naming each offending variable (see ConfigError).
 */
const port = z.coerce.number().int().min(0).max(65535);

const base64Key = z.string().refine((value) => Buffer.from(value, 'base64').length === 32, {
  message: 'must be 32 bytes encoded as base64 (e.g. `openssl rand -base64 32`)',
});

/** A setting holding JSON, checked against a schema like any other value. */
function json<S extends z.ZodType>(inner: S) {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(inner);
}

const appUrls = z.record(
  z.string(),
  z.union([
    z.url({ protocol: /^https?$/ }),
    z.strictObject({
      oauth: z.url({ protocol: /^https?$/ }).optional(),
      api: z.url({ protocol: /^https?$/ }).optional(),
    }),
  ]),
);

const platformClients = z.record(
  z.string(),
  z.strictObject({ clientId: z.string().min(1), clientSecret: z.string().min(1) }),
);

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const schema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),

  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('gatehouse'),
  TEMPORAL_TLS: z.stringbool().default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),

  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(3000),
  /** The address end users and callers reach the API at; connect links are built from it. */
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Request bodies above this size are refused with 413 before they reach a workflow. */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),

  /** How long a call waits for the app's answer before `upstream_timeout`. */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(30_000),
  /** How long the caller of an approved call has to retry it (DESIGN.md §4: one hour). */
  APPROVED_RETRY_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
  /** Where `approval.decided` webhooks may not go: loopback and private addresses are refused
   * unless this is true (local development and tests). */
  WEBHOOK_ALLOW_PRIVATE: z.stringbool().default(false),

  /** Encrypts tokens and client secrets at rest (AES-256-GCM). */
  ENCRYPTION_KEY: base64Key,
  ENCRYPTION_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 letters, digits, - or _')
    .default('k1'),
  /** Keys retired by a rotation, still needed to open older values: `id:base64,id:base64`. */
  ENCRYPTION_PREVIOUS_KEYS: z
    .string()
    .regex(
      /^([A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/=]+)(,[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/=]+)*$/,
      'must be a comma-separated list of keyId:base64Key',
    )
    .optional(),

  /** Where each app really is, over the catalog's defaults: `{"acme":"http://127.0.0.1:4010"}` or
   * `{"github":{"oauth":"https://github.com","api":"https://api.github.com"}}`. */
  APP_URLS: json(appUrls).default({}),
  /** The operator's own OAuth clients, used under funded access: `{"acme":{"clientId":…,"clientSecret":…}}`. */
  PLATFORM_OAUTH_CLIENTS: json(platformClients).default({}),

  LOG_LEVEL: logLevel.default('info'),
});

export type RawConfig = z.infer<typeof schema>;

export interface Config {
  database: { url: string; poolSize: number };
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    tls: boolean;
    tlsCertPath: string | undefined;
    tlsKeyPath: string | undefined;
    apiKey: string | undefined;
  };
  api: { host: string; port: number; publicUrl: string; bodyLimitBytes: number };
  upstream: { timeoutMs: number };
  approvals: { retryWindowSeconds: number };
  webhooks: { allowPrivate: boolean };
  encryption: Keyring;
  apps: {
    urls: Record<string, { oauth?: string; api?: string }>;
    platformClients: Record<string, { clientId: string; clientSecret: string }>;
  };
  logLevel: z.infer<typeof logLevel>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = issue.path.join('.');
        const message =
          issue.code === 'invalid_type' && env[name] === undefined ? 'is required' : issue.message;
        return `${name}: ${message}`;
      }),
    );
  }
  const c = parsed.data;
  if (Boolean(c.TEMPORAL_TLS_CERT_PATH) !== Boolean(c.TEMPORAL_TLS_KEY_PATH)) {
    throw new ConfigError([
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH: set both for mutual TLS, or neither',
    ]);
  }
  return {
    database: { url: c.DATABASE_URL, poolSize: c.DATABASE_POOL_SIZE },
    temporal: {
      address: c.TEMPORAL_ADDRESS,
      namespace: c.TEMPORAL_NAMESPACE,
      taskQueue: c.TEMPORAL_TASK_QUEUE,
      tls: c.TEMPORAL_TLS || Boolean(c.TEMPORAL_TLS_CERT_PATH) || Boolean(c.TEMPORAL_API_KEY),
      tlsCertPath: c.TEMPORAL_TLS_CERT_PATH,
      tlsKeyPath: c.TEMPORAL_TLS_KEY_PATH,
      apiKey: c.TEMPORAL_API_KEY,
    },
    api: {
      host: c.API_HOST,
      port: c.API_PORT,
      publicUrl: (c.PUBLIC_URL ?? `http://${c.API_HOST}:${c.API_PORT}`).replace(/\/+$/, ''),
      bodyLimitBytes: c.BODY_LIMIT_BYTES,
    },
    upstream: { timeoutMs: c.UPSTREAM_TIMEOUT_MS },
    approvals: { retryWindowSeconds: c.APPROVED_RETRY_WINDOW_SECONDS },
    webhooks: { allowPrivate: c.WEBHOOK_ALLOW_PRIVATE },
    encryption: {
      current: { id: c.ENCRYPTION_KEY_ID, key: Buffer.from(c.ENCRYPTION_KEY, 'base64') },
      previous: Object.fromEntries(
        (c.ENCRYPTION_PREVIOUS_KEYS ?? '')
          .split(',')
          .filter(Boolean)
          .map((pair) => [
            pair.slice(0, pair.indexOf(':')),
            Buffer.from(pair.slice(pair.indexOf(':') + 1), 'base64'),
          ]),
      ),
    },
    apps: {
      urls: Object.fromEntries(
        Object.entries(c.APP_URLS).map(([app, url]) => [
          app,
          typeof url === 'string' ? { oauth: url, api: url } : url,
        ]),
      ),
      platformClients: c.PLATFORM_OAUTH_CLIENTS,
    },
    logLevel: c.LOG_LEVEL,
  };
}
