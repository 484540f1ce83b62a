import { z } from 'zod';
import { parseAuditSigningKey, type AuditSigningKey } from './audit-signing-key.js';
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
  /** How long opening a connection (TCP, TLS, authentication) may take. */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
  /** Postgres `statement_timeout`: one statement, lock waits included. */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /** Postgres `idle_in_transaction_session_timeout`: a transaction left waiting on its client. */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(5000),

  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('gatehouse'),
  TEMPORAL_TLS: z.stringbool().default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /** Where operators open the Temporal Web UI (e.g. `http://127.0.0.1:8233`): the one origin the
   * codec endpoint answers cross-origin requests from, with credentials. Unset: none. */
  TEMPORAL_UI_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Set by `gatehouse dev`, whose banner prints a one-step sign-in link for the Temporal UI:
   * the codec endpoint's refusals and sign-in page then point to it. */
  CODEC_DEV_SIGN_IN_LINK: z.stringbool().default(false),
  /** Workflows each worker task queue keeps in memory between their tasks. A held call
   * waits for days; evicted, it replays its short history (~20 events) when decided or expired,
   * so memory stays bounded however many calls are held. 0 keeps none (every task replays);
   * otherwise at least the 200 workflow tasks a worker runs at once. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .refine((n) => n === 0 || (n >= 200 && n <= 100_000), {
      message: 'must be 0 (no cache) or 200-100000',
    })
    .default(500),
  /** A folder where the worker keeps its workflow bundle, reused at its next start while every
   * file bundled is unchanged, instead of bundling anew (seconds of CPU). Only the worker's own
   * user may be able to write there: the worker runs what it finds. Unset: bundled at every
   * start. `gatehouse dev` keeps one in its data folder. */
  WORKFLOW_BUNDLE_CACHE: z.string().min(1).optional(),
  /** How long a request waits for Temporal to take its call or decision; one not taken by then
   * is refused by the workflow, never applied later. */
  REQUEST_DEADLINE_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  /** The longest `Prefer: wait` honoured on a held call or an approval; 0: none. */
  PREFER_WAIT_MAX_SECONDS: z.coerce.number().int().min(0).max(600).default(60),

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
  /** How long the caller of an approved call has to retry it (default one hour). */
  APPROVED_RETRY_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
  /** Where `approval.decided` webhooks may not go: loopback and private addresses are refused
   * unless this is true (local development and tests). */
  WEBHOOK_ALLOW_PRIVATE: z.stringbool().default(false),
  /** Remote MCP servers registered as apps may be on loopback or private addresses
   * (and plain http on loopback) only when this is true (local development and tests). */
  MCP_APPS_ALLOW_PRIVATE: z.stringbool().default(false),
  /** Approval notifications (an SMTP relay, a Teams webhook) may go to loopback or private
   * addresses, and Slack's API address be set to a stand-in, only when this is true (local
   * development and tests). */
  NOTIFY_ALLOW_PRIVATE: z.stringbool().default(false),
  /** The longest lifetime a backend may give an MCP session it mints; default 30 days. */
  MCP_SESSION_MAX_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(365 * 24 * 3600)
    .default(30 * 24 * 3600),
  /** How many tools one `tools/list` page holds; the rest follow by cursor. */
  MCP_TOOLS_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  /** How long an MCP task (a held tool call) and its answer are kept from its creation; default
   * 7 days, longer than an approval waits. */
  MCP_TASK_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(90 * 24 * 3600)
    .default(7 * 24 * 3600),
  /** The `pollInterval` MCP tasks suggest to their clients. */
  MCP_TASK_POLL_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /** The longest one `tasks/result` is held open before it answers that the task still works
   * (every request is answered in bounded time); the client asks again. */
  MCP_TASK_RESULT_WAIT_SECONDS: z.coerce.number().int().min(1).max(600).default(50),

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

  /** Rate limits, counted in Postgres so that they hold across API processes. */
  RATE_LIMIT_ENABLED: z.stringbool().default(true),
  /** Requests one API key may make per minute; generous, so `npm run bench` never meets it. */
  RATE_LIMIT_PER_KEY_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(6000),
  /** Requests with a wrong or missing key one client address may make per minute. */
  RATE_LIMIT_FAILED_AUTH_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /** Requests to the hosted connect and approval pages one client address may make per minute. */
  RATE_LIMIT_PAGES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(120),
  /** How long a request waits for the shared count before it is counted in the process alone. */
  RATE_LIMIT_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(500),

  /** Signs audit checkpoints: an Ed25519 PKCS#8 PEM or a 32-byte base64 seed.
   * Unset: the worker seals nothing (README "Audit integrity"). */
  AUDIT_SIGNING_KEY: z.string().min(1).optional(),
  /** The id checkpoints record for the key; a rotation is a new key under a new id. */
  AUDIT_SIGNING_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 letters, digits, - or _')
    .default('a1'),
  /** How often the Temporal Schedule seals new audit events into checkpoints. */
  AUDIT_SEAL_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Events younger than this are left to the next seal: the service may still rewrite them. */
  AUDIT_SEAL_SETTLE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  /** How often an idle `audit.event` delivery looks for new events (README "Webhooks"). */
  AUDIT_WEBHOOK_POLL_SECONDS: z.coerce.number().int().min(1).max(3600).default(5),

  /** Sign-in for people (README "Sign in people"): the OpenID Connect provider's issuer URL, and
   * the confidential client Gatehouse signs in with there. Set all three, or none (no sign-in:
   * people decide through decision links, machines through keys). */
  OIDC_ISSUER_URL: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The ID token claim that lists a person's groups (Okta `groups`, Entra `groups` or `roles`). */
  OIDC_GROUPS_CLAIM: z.string().min(1).max(200).default('groups'),
  /** The scopes asked for; Okta releases groups only to a `groups` scope it was told about. */
  OIDC_SCOPES: z
    .string()
    .regex(
      /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/,
      'must be scopes separated by single spaces',
    )
    .refine((value) => value.split(' ').includes('openid'), 'must include openid')
    .default('openid email profile'),
  /** Only people whose verified email is in one of these domains may sign in
   * (`example.com,example.org`); unset: any the provider vouches for. */
  OIDC_ALLOWED_EMAIL_DOMAINS: z
    .string()
    .regex(/^[a-z0-9.-]+(,[a-z0-9.-]+)*$/i, 'must be a comma-separated list of domains')
    .optional(),
  /** A console session ends after this long without a request… */
  CONSOLE_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(60),
  /** …and this long after its sign-in, whatever happens. */
  CONSOLE_SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 24)
    .default(12),

  LOG_LEVEL: logLevel.default('info'),

  /** Tracing (README, "Observe it"): spans go to this OTLP/HTTP collector; unset, tracing is off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** Where an operator opens a trace, `{trace_id}` standing for its id: linked from the Temporal UI. */
  TRACE_URL_TEMPLATE: z
    .string()
    .refine((value) => value.includes('{trace_id}'), 'must contain {trace_id}')
    .refine((value) => URL.canParse(value.replace('{trace_id}', '0')), 'must be a URL')
    .optional(),
  /** The process's Prometheus endpoint, `host:port` (e.g. `127.0.0.1:9464`); unset, none. */
  METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[\da-fA-F:.]+\]|[\w.-]+):\d{1,5}$/, 'must be host:port')
    .optional(),
});

export type RawConfig = z.infer<typeof schema>;

/** Bounds on every wait for Postgres (infra/database/client.ts). */
export interface DatabaseTimeouts {
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/** Bounds on a request's wait for Temporal (api/temporal/call-workflows.ts). */
export interface RequestLimits {
  /** REQUEST_DEADLINE_MS: a call or decision that Temporal has not taken by then never applies. */
  deadlineMs: number;
  /** How long a taken call may still take to answer: the app's time, with a refresh and one
   * retry after a 401 (twice UPSTREAM_TIMEOUT_MS), plus the bookkeeping around it. */
  callAnswerMs: number;
  /** PREFER_WAIT_MAX_SECONDS: the longest wait for a decision a caller may ask for. */
  maxWaitSeconds: number;
}

export function requestLimits(
  deadlineMs: number,
  upstreamTimeoutMs: number,
  maxWaitSeconds: number = schema.shape.PREFER_WAIT_MAX_SECONDS.parse(undefined),
): RequestLimits {
  return { deadlineMs, callAnswerMs: 2 * upstreamTimeoutMs + 30_000, maxWaitSeconds };
}

/** What applies where a process builds its clients without the configuration at hand. */
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectTimeoutMs: schema.shape.DATABASE_CONNECT_TIMEOUT_MS.parse(undefined),
  statementTimeoutMs: schema.shape.DATABASE_STATEMENT_TIMEOUT_MS.parse(undefined),
  idleInTransactionTimeoutMs: schema.shape.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS.parse(undefined),
};
export const DEFAULT_REQUEST_LIMITS: RequestLimits = requestLimits(
  schema.shape.REQUEST_DEADLINE_MS.parse(undefined),
  schema.shape.UPSTREAM_TIMEOUT_MS.parse(undefined),
);

/** Limits per minute, and the bound on asking Postgres for the shared count (api/http/rate-limit.ts). */
export interface RateLimits {
  enabled: boolean;
  perKeyPerMinute: number;
  failedAuthPerMinute: number;
  pagesPerMinute: number;
  timeoutMs: number;
}

export interface Config {
  database: { url: string; poolSize: number; timeouts: DatabaseTimeouts };
  requests: RequestLimits;
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    tls: boolean;
    tlsCertPath: string | undefined;
    tlsKeyPath: string | undefined;
    apiKey: string | undefined;
    /** The Temporal UI's origin (TEMPORAL_UI_URL), or null when none is configured. */
    uiOrigin: string | null;
    /** Whether a `gatehouse dev` banner offers a one-step codec sign-in link. */
    devSignInLink: boolean;
  };
  /** WORKER_MAX_CACHED_WORKFLOWS: the bound on each worker task queue's workflow cache.
   * WORKFLOW_BUNDLE_CACHE: where the workflow bundle is kept between starts, or null. */
  worker: { maxCachedWorkflows: number; bundleCache: string | null };
  api: { host: string; port: number; publicUrl: string; bodyLimitBytes: number };
  upstream: { timeoutMs: number };
  approvals: { retryWindowSeconds: number };
  webhooks: { allowPrivate: boolean };
  mcpApps: { allowPrivate: boolean };
  /** NOTIFY_ALLOW_PRIVATE (README "Tell approvers where they work"). */
  notifications: { allowPrivate: boolean };
  mcp: {
    sessionMaxTtlSeconds: number;
    toolsPageSize: number;
    /** MCP_TASK_TTL_SECONDS, MCP_TASK_POLL_INTERVAL_MS, MCP_TASK_RESULT_WAIT_SECONDS. */
    tasks: { ttlSeconds: number; pollIntervalMs: number; resultWaitSeconds: number };
  };
  encryption: Keyring;
  apps: {
    urls: Record<string, { oauth?: string; api?: string }>;
    platformClients: Record<string, { clientId: string; clientSecret: string }>;
  };
  rateLimits: RateLimits;
  /** Traces and metrics (README, "Observe it"); null where off. */
  observability: {
    otlpEndpoint: string | null;
    traceUrlTemplate: string | null;
    metrics: { host: string; port: number } | null;
  };
  audit: {
    /** null: no AUDIT_SIGNING_KEY, nothing is sealed. */
    signingKey: AuditSigningKey | null;
    sealIntervalSeconds: number;
    settleSeconds: number;
    webhookPollSeconds: number;
  };
  /** Sign-in for people and their console sessions (README "Sign in people"). */
  people: {
    /** null: no identity provider configured, so nobody signs in. */
    oidc: OidcSettings | null;
    session: { idleSeconds: number; absoluteSeconds: number };
  };
  logLevel: z.infer<typeof logLevel>;
}

/** The identity provider people sign in with, and how Gatehouse asks it. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  groupsClaim: string;
  scopes: string;
  /** Lower-case domains; empty: any. */
  allowedEmailDomains: string[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** `env` read by `shape`, every problem named by its variable. */
function parseEnv<S extends z.ZodType>(shape: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = shape.safeParse(env);
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
  return parsed.data;
}

function auditSigningKeyOf(c: {
  AUDIT_SIGNING_KEY?: string | undefined;
  AUDIT_SIGNING_KEY_ID: string;
}): AuditSigningKey | null {
  try {
    return c.AUDIT_SIGNING_KEY
      ? parseAuditSigningKey(c.AUDIT_SIGNING_KEY, c.AUDIT_SIGNING_KEY_ID)
      : null;
  } catch (error) {
    throw new ConfigError([
      `AUDIT_SIGNING_KEY: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
}

/**
 * AUDIT_SIGNING_KEY and AUDIT_SIGNING_KEY_ID alone, read as the worker reads them: for a command
 * that signs with the worker's key and needs nothing else (`gatehouse audit repair`).
 */
export function loadAuditSigningKey(env: NodeJS.ProcessEnv = process.env): AuditSigningKey | null {
  return auditSigningKeyOf(
    parseEnv(schema.pick({ AUDIT_SIGNING_KEY: true, AUDIT_SIGNING_KEY_ID: true }), env),
  );
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const c = parseEnv(schema, env);
  if (Boolean(c.TEMPORAL_TLS_CERT_PATH) !== Boolean(c.TEMPORAL_TLS_KEY_PATH)) {
    throw new ConfigError([
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH: set both for mutual TLS, or neither',
    ]);
  }
  const signingKey = auditSigningKeyOf(c);
  const publicUrl = (c.PUBLIC_URL ?? `http://${c.API_HOST}:${String(c.API_PORT)}`).replace(
    /\/+$/,
    '',
  );
  const oidc = oidcSettingsOf(c, publicUrl);
  return {
    database: {
      url: c.DATABASE_URL,
      poolSize: c.DATABASE_POOL_SIZE,
      timeouts: {
        connectTimeoutMs: c.DATABASE_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
        idleInTransactionTimeoutMs: c.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
    },
    requests: requestLimits(
      c.REQUEST_DEADLINE_MS,
      c.UPSTREAM_TIMEOUT_MS,
      c.PREFER_WAIT_MAX_SECONDS,
    ),
    temporal: {
      address: c.TEMPORAL_ADDRESS,
      namespace: c.TEMPORAL_NAMESPACE,
      taskQueue: c.TEMPORAL_TASK_QUEUE,
      tls: c.TEMPORAL_TLS || Boolean(c.TEMPORAL_TLS_CERT_PATH) || Boolean(c.TEMPORAL_API_KEY),
      tlsCertPath: c.TEMPORAL_TLS_CERT_PATH,
      tlsKeyPath: c.TEMPORAL_TLS_KEY_PATH,
      apiKey: c.TEMPORAL_API_KEY,
      uiOrigin: c.TEMPORAL_UI_URL ? new URL(c.TEMPORAL_UI_URL).origin : null,
      devSignInLink: c.CODEC_DEV_SIGN_IN_LINK,
    },
    worker: {
      maxCachedWorkflows: c.WORKER_MAX_CACHED_WORKFLOWS,
      bundleCache: c.WORKFLOW_BUNDLE_CACHE ?? null,
    },
    api: {
      host: c.API_HOST,
      port: c.API_PORT,
      publicUrl,
      bodyLimitBytes: c.BODY_LIMIT_BYTES,
    },
    upstream: { timeoutMs: c.UPSTREAM_TIMEOUT_MS },
    approvals: { retryWindowSeconds: c.APPROVED_RETRY_WINDOW_SECONDS },
    webhooks: { allowPrivate: c.WEBHOOK_ALLOW_PRIVATE },
    mcpApps: { allowPrivate: c.MCP_APPS_ALLOW_PRIVATE },
    notifications: { allowPrivate: c.NOTIFY_ALLOW_PRIVATE },
    mcp: {
      sessionMaxTtlSeconds: c.MCP_SESSION_MAX_TTL_SECONDS,
      toolsPageSize: c.MCP_TOOLS_PAGE_SIZE,
      tasks: {
        ttlSeconds: c.MCP_TASK_TTL_SECONDS,
        pollIntervalMs: c.MCP_TASK_POLL_INTERVAL_MS,
        resultWaitSeconds: c.MCP_TASK_RESULT_WAIT_SECONDS,
      },
    },
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
    rateLimits: {
      enabled: c.RATE_LIMIT_ENABLED,
      perKeyPerMinute: c.RATE_LIMIT_PER_KEY_PER_MINUTE,
      failedAuthPerMinute: c.RATE_LIMIT_FAILED_AUTH_PER_MINUTE,
      pagesPerMinute: c.RATE_LIMIT_PAGES_PER_MINUTE,
      timeoutMs: c.RATE_LIMIT_TIMEOUT_MS,
    },
    audit: {
      signingKey,
      sealIntervalSeconds: c.AUDIT_SEAL_INTERVAL_SECONDS,
      settleSeconds: c.AUDIT_SEAL_SETTLE_SECONDS,
      webhookPollSeconds: c.AUDIT_WEBHOOK_POLL_SECONDS,
    },
    logLevel: c.LOG_LEVEL,
    people: {
      oidc,
      session: {
        idleSeconds: c.CONSOLE_SESSION_IDLE_MINUTES * 60,
        absoluteSeconds: c.CONSOLE_SESSION_MAX_HOURS * 3600,
      },
    },
    observability: {
      otlpEndpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT ?? null,
      traceUrlTemplate: c.TRACE_URL_TEMPLATE ?? null,
      metrics: c.METRICS_ADDRESS ? hostAndPort(c.METRICS_ADDRESS) : null,
    },
  };
}

/** `host:port` or `[v6]:port`, as METRICS_ADDRESS is written. */
function hostAndPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  return {
    host: address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'),
    port: Number(address.slice(colon + 1)),
  };
}

/**
 * The three OIDC settings go together. A session cookie is a bearer credential: outside loopback
 * it must travel only over https, so sign-in with a plain-http PUBLIC_URL is refused there.
 */
function oidcSettingsOf(c: RawConfig, publicUrl: string): OidcSettings | null {
  const given = [c.OIDC_ISSUER_URL, c.OIDC_CLIENT_ID, c.OIDC_CLIENT_SECRET].filter(
    (value) => value !== undefined,
  ).length;
  if (given === 0) return null;
  if (given < 3) {
    throw new ConfigError([
      'OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: set all three for sign-in, or none',
    ]);
  }
  const url = new URL(publicUrl);
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
    throw new ConfigError([
      'PUBLIC_URL: people sign in only over https outside loopback (their session cookie is Secure); set an https PUBLIC_URL',
    ]);
  }
  return {
    issuer: c.OIDC_ISSUER_URL as string,
    clientId: c.OIDC_CLIENT_ID as string,
    clientSecret: c.OIDC_CLIENT_SECRET as string,
    groupsClaim: c.OIDC_GROUPS_CLAIM,
    scopes: c.OIDC_SCOPES,
    allowedEmailDomains: (c.OIDC_ALLOWED_EMAIL_DOMAINS ?? '')
      .split(',')
      .filter(Boolean)
      .map((domain) => domain.toLowerCase()),
  };
}

/** 127.0.0.0/8, ::1 and localhost: where a browser treats plain http as a secure context. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
