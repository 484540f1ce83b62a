import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../infra/config.js';

const KEY = Buffer.alloc(32, 7).toString('base64');
const minimal = { DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/gatehouse', ENCRYPTION_KEY: KEY };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('fills defaults around the two required settings', () => {
    const config = loadConfig(minimal);
    expect(config.temporal).toMatchObject({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'gatehouse',
    });
    expect(config.api).toMatchObject({
      port: 3000,
      publicUrl: 'http://127.0.0.1:3000',
      bodyLimitBytes: 1048576,
    });
    expect(config.encryption.current.key).toHaveLength(32);
  });

  it('names every missing required setting', () => {
    expect(problems({})).toEqual(['DATABASE_URL: is required', 'ENCRYPTION_KEY: is required']);
  });

  it.each([
    ['API_PORT', 'seventy', /API_PORT/],
    ['API_PORT', '70000', /API_PORT/],
    ['DATABASE_URL', 'mysql://x/y', /DATABASE_URL: must be a postgres/],
    ['ENCRYPTION_KEY', Buffer.alloc(16).toString('base64'), /ENCRYPTION_KEY: must be 32 bytes/],
    ['TEMPORAL_TLS', 'perhaps', /TEMPORAL_TLS/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['PUBLIC_URL', 'ftp://example.com', /PUBLIC_URL/],
    ['BODY_LIMIT_BYTES', '10', /BODY_LIMIT_BYTES/],
    ['ENCRYPTION_PREVIOUS_KEYS', 'no-colon', /ENCRYPTION_PREVIOUS_KEYS/],
    ['REQUEST_DEADLINE_MS', '100', /REQUEST_DEADLINE_MS/],
    ['REQUEST_DEADLINE_MS', 'soon', /REQUEST_DEADLINE_MS/],
    ['DATABASE_CONNECT_TIMEOUT_MS', '0', /DATABASE_CONNECT_TIMEOUT_MS/],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '1.5', /DATABASE_STATEMENT_TIMEOUT_MS/],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', '-1', /DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS/],
    ['RATE_LIMIT_ENABLED', 'maybe', /RATE_LIMIT_ENABLED/],
    ['RATE_LIMIT_PER_KEY_PER_MINUTE', '0', /RATE_LIMIT_PER_KEY_PER_MINUTE/],
    ['RATE_LIMIT_FAILED_AUTH_PER_MINUTE', 'many', /RATE_LIMIT_FAILED_AUTH_PER_MINUTE/],
    ['RATE_LIMIT_PAGES_PER_MINUTE', '2.5', /RATE_LIMIT_PAGES_PER_MINUTE/],
    ['RATE_LIMIT_TIMEOUT_MS', '5', /RATE_LIMIT_TIMEOUT_MS/],
    ['TEMPORAL_UI_URL', '127.0.0.1:8233', /TEMPORAL_UI_URL/],
    ['TEMPORAL_UI_URL', 'file:///ui', /TEMPORAL_UI_URL/],
  ])('refuses %s=%s, naming it', (name, value, expected) => {
    const found = problems({ ...minimal, [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(expected);
  });

  it('bounds every wait on Postgres and Temporal by default, and takes other bounds', () => {
    const defaults = loadConfig(minimal);
    expect(defaults.database.timeouts).toEqual({
      connectTimeoutMs: 5000,
      statementTimeoutMs: 5000,
      idleInTransactionTimeoutMs: 5000,
    });
    // A taken call may wait for the app twice (a retry after a 401), plus bookkeeping.
    // A held call's caller may wait a minute for its decision (Prefer: wait).
    expect(defaults.requests).toEqual({
      deadlineMs: 10_000,
      callAnswerMs: 90_000,
      maxWaitSeconds: 60,
    });

    const tuned = loadConfig({
      ...minimal,
      REQUEST_DEADLINE_MS: '2000',
      UPSTREAM_TIMEOUT_MS: '1000',
      DATABASE_CONNECT_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '30000',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '2500',
      PREFER_WAIT_MAX_SECONDS: '0',
    });
    expect(tuned.requests).toEqual({ deadlineMs: 2000, callAnswerMs: 32_000, maxWaitSeconds: 0 });
    expect(tuned.database.timeouts).toEqual({
      connectTimeoutMs: 1500,
      statementTimeoutMs: 30_000,
      idleInTransactionTimeoutMs: 2500,
    });
  });

  it('limits rates by default, generously per key, and takes other limits', () => {
    expect(loadConfig(minimal).rateLimits).toEqual({
      enabled: true,
      perKeyPerMinute: 6000,
      failedAuthPerMinute: 30,
      pagesPerMinute: 120,
      timeoutMs: 500,
    });
    expect(
      loadConfig({
        ...minimal,
        RATE_LIMIT_ENABLED: 'false',
        RATE_LIMIT_PER_KEY_PER_MINUTE: '100',
        RATE_LIMIT_FAILED_AUTH_PER_MINUTE: '3',
        RATE_LIMIT_PAGES_PER_MINUTE: '10',
        RATE_LIMIT_TIMEOUT_MS: '50',
      }).rateLimits,
    ).toEqual({
      enabled: false,
      perKeyPerMinute: 100,
      failedAuthPerMinute: 3,
      pagesPerMinute: 10,
      timeoutMs: 50,
    });
  });

  it('bounds the worker workflow cache by default, and takes 0 or at least 200', () => {
    expect(loadConfig(minimal).worker).toEqual({ maxCachedWorkflows: 500, bundleCache: null });
    expect(loadConfig({ ...minimal, WORKER_MAX_CACHED_WORKFLOWS: '0' }).worker).toEqual({
      maxCachedWorkflows: 0,
      bundleCache: null,
    });
    expect(loadConfig({ ...minimal, WORKER_MAX_CACHED_WORKFLOWS: '2000' }).worker).toEqual({
      maxCachedWorkflows: 2000,
      bundleCache: null,
    });
    // Fewer than the 200 workflow tasks a worker runs at once would make the SDK lower that.
    expect(problems({ ...minimal, WORKER_MAX_CACHED_WORKFLOWS: '50' })).toEqual([
      'WORKER_MAX_CACHED_WORKFLOWS: must be 0 (no cache) or 200-100000',
    ]);
  });

  it('keeps the workflow bundle between starts only where WORKFLOW_BUNDLE_CACHE says', () => {
    expect(
      loadConfig({ ...minimal, WORKFLOW_BUNDLE_CACHE: '/var/cache/gatehouse' }).worker.bundleCache,
    ).toBe('/var/cache/gatehouse');
  });

  it('knows the Temporal UI by its origin, and no UI when none is set', () => {
    expect(loadConfig(minimal).temporal.uiOrigin).toBeNull();
    expect(
      loadConfig({ ...minimal, TEMPORAL_UI_URL: 'https://temporal.example.com/namespaces/' })
        .temporal.uiOrigin,
    ).toBe('https://temporal.example.com');
  });

  it('requires the mutual-TLS certificate and key together', () => {
    expect(problems({ ...minimal, TEMPORAL_TLS_CERT_PATH: '/c.pem' })[0]).toMatch(
      /TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH/,
    );
  });

  it('keeps retired encryption keys for reading old values', () => {
    const old = Buffer.alloc(32, 1).toString('base64');
    const config = loadConfig({
      ...minimal,
      ENCRYPTION_KEY_ID: 'k2',
      ENCRYPTION_PREVIOUS_KEYS: `k1:${old}`,
    });
    expect(config.encryption.current.id).toBe('k2');
    expect(config.encryption.previous?.k1).toEqual(Buffer.from(old, 'base64'));
  });

  it('strips a trailing slash from the public URL', () => {
    expect(
      loadConfig({ ...minimal, PUBLIC_URL: 'https://gatehouse.example.com/' }).api.publicUrl,
    ).toBe('https://gatehouse.example.com');
  });

  describe('sign-in for people', () => {
    const oidc = {
      OIDC_ISSUER_URL: 'https://example.okta.com/oauth2/default',
      OIDC_CLIENT_ID: 'gatehouse',
      OIDC_CLIENT_SECRET: 'secret',
    };

    it('is off without an identity provider, with session lifetimes of an hour idle and 12 hours', () => {
      expect(loadConfig(minimal).people).toEqual({
        oidc: null,
        session: { idleSeconds: 3600, absoluteSeconds: 43_200 },
      });
    });

    it('reads the provider, its groups claim, scopes and allowed domains', () => {
      const config = loadConfig({
        ...minimal,
        ...oidc,
        PUBLIC_URL: 'https://gatehouse.example.com',
        OIDC_GROUPS_CLAIM: 'roles',
        OIDC_SCOPES: 'openid email profile groups',
        OIDC_ALLOWED_EMAIL_DOMAINS: 'Example.com,example.org',
        CONSOLE_SESSION_IDLE_MINUTES: '15',
        CONSOLE_SESSION_MAX_HOURS: '8',
      });
      expect(config.people).toEqual({
        oidc: {
          issuer: oidc.OIDC_ISSUER_URL,
          clientId: 'gatehouse',
          clientSecret: 'secret',
          groupsClaim: 'roles',
          scopes: 'openid email profile groups',
          allowedEmailDomains: ['example.com', 'example.org'],
        },
        session: { idleSeconds: 900, absoluteSeconds: 28_800 },
      });
    });

    it('needs all three of issuer, client id and secret', () => {
      expect(problems({ ...minimal, OIDC_ISSUER_URL: oidc.OIDC_ISSUER_URL })).toEqual([
        'OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: set all three for sign-in, or none',
      ]);
    });

    it('refuses sign-in over plain http outside loopback, where the cookie could not be Secure', () => {
      expect(problems({ ...minimal, ...oidc, PUBLIC_URL: 'http://gatehouse.example.com' })).toEqual(
        [
          'PUBLIC_URL: people sign in only over https outside loopback (their session cookie is Secure); set an https PUBLIC_URL',
        ],
      );
      expect(problems({ ...minimal, ...oidc, PUBLIC_URL: 'http://localhost:3000' })).toEqual([]);
      expect(problems({ ...minimal, ...oidc, PUBLIC_URL: 'http://[::1]:3000' })).toEqual([]);
    });

    it.each([
      ['OIDC_SCOPES', 'email profile', /must include openid/],
      ['OIDC_SCOPES', 'openid  email', /single spaces/],
      ['OIDC_ALLOWED_EMAIL_DOMAINS', 'example.com; evil.com', /comma-separated list of domains/],
      ['CONSOLE_SESSION_IDLE_MINUTES', '0', /CONSOLE_SESSION_IDLE_MINUTES/],
      ['OIDC_ISSUER_URL', 'ftp://idp.example.com', /OIDC_ISSUER_URL/],
    ])('refuses %s=%s', (name, value, problem) => {
      expect(problems({ ...minimal, ...oidc, [name]: value }).join('\n')).toMatch(problem);
    });
  });
});
