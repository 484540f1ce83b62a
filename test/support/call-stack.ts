import { saveRefreshedTokens } from '../../activities/db/connections.js';
import type { Config } from '../../infra/config.js';
import { holdApiPort, startTestApi, type TestApi } from './api.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { bearer, createTestKey, type TestKey } from './keys.js';
import { startAcmeFixture, type AcmeFixture, type SeededConnection } from './seed-connection.js';
import { startOrUndo } from './stops.js';
import { startTestWorker, type TestWorker } from './worker.js';

export interface Answer<B = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: B;
}

/** A fetch response as tests read it: the JSON body, or `{text}` when it is not JSON. */
export async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: response.status, headers: response.headers, body };
}

export interface CallStack {
  db: TestDatabase;
  acme: AcmeFixture;
  config: Config;
  worker: TestWorker;
  api: TestApi;
  /** Full access, agent `test-agent`: the calling agent of most tests. */
  key: TestKey;
  /** Full access, agent `approver`: decides the approvals of `key`'s calls (four eyes). */
  approver: TestKey;
  environmentId: string;
  connect(externalId: string): Promise<SeededConnection>;
  request(
    key: TestKey | string,
    method: string,
    path: string,
    options?: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string> },
  ): Promise<Answer>;
  run(
    action: string,
    body: Record<string, unknown>,
    options?: { key?: TestKey; headers?: Record<string, string> },
  ): Promise<Answer>;
  /** Replaces the `default` policy's decisions for the test's environment. */
  setDefaults(
    defaults: { read: string; write: string; destructive: string },
    extra?: object,
  ): Promise<void>;
  /** Stores a fresh-looking access token the app never issued: its next use meets a 401. */
  forgetAccessToken(seeded: SeededConnection): Promise<void>;
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A governed-call test's world, for real: its own database, the demo app as `acme` with users
 * connected to it, a worker, the API, and a full-access key in environment `test`. The API's port
 * is held before anything is configured, so PUBLIC_URL (links, redirect URIs) is where it listens.
 * A start that fails part-way stops what it had started.
 */
export async function startCallStack(
  options: {
    accessTokenTtlSeconds?: number;
    env?: Record<string, string>;
    /** Where other catalog apps are, next to acme at the demo app (APP_URLS). */
    appUrls?: Record<string, string>;
    /**
     * More settings that depend on where the API listens (its PUBLIC_URL, once its port is held):
     * an identity provider registers the console's redirect URI before the API is configured.
     */
    envFor?: (publicUrl: string) => Promise<Record<string, string>>;
  } = {},
): Promise<CallStack> {
  return startOrUndo(async (stops) => {
    const listening = stops.add(await holdApiPort());
    const db = stops.add(await createTestDatabase());
    const more = options.envFor
      ? await options.envFor(`http://127.0.0.1:${String(listening.port)}`)
      : {};
    const env = { API_PORT: String(listening.port), ...options.env, ...more };
    const acme = stops.add(
      await startAcmeFixture(db.sql, db.url, {
        ...(options.accessTokenTtlSeconds
          ? { accessTokenTtlSeconds: options.accessTokenTtlSeconds }
          : {}),
        env,
        ...(options.appUrls ? { appUrls: options.appUrls } : {}),
      }),
    );
    const config = acme.config;
    let worker = await startTestWorker(config, db.sql);
    // The worker running now: `restartWorker` replaces it.
    stops.push(() => worker.stop());
    const api = stops.add(await startTestApi(config, db.sql, { listening }));
    const key = await createTestKey(db.sql, { env: 'test', access: 'full', agentId: 'test-agent' });
    const approver = await createTestKey(db.sql, {
      env: 'test',
      access: 'full',
      agentId: 'approver',
    });

    const stack: CallStack = {
      db,
      acme,
      config,
      worker,
      api,
      key,
      approver,
      environmentId: key.environmentId,
      connect: (externalId) => acme.connect({ environmentId: key.environmentId, externalId }),
      async request(who, method, path, opts = {}) {
        const headers: Record<string, string> = {
          ...bearer(typeof who === 'string' ? who : who.key),
          ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...opts.headers,
        };
        const response = await fetch(`${api.url}${path}`, {
          method,
          headers,
          ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
          ...(opts.raw === undefined ? {} : { body: opts.raw }),
        });
        return answerOf(response);
      },
      run(action, body, opts = {}) {
        return stack.request(opts.key ?? key, 'POST', `/v1/actions/${action}/run`, {
          body,
          ...(opts.headers ? { headers: opts.headers } : {}),
        });
      },
      async setDefaults(defaults, extra = {}) {
        const answer = await stack.request(key, 'PUT', '/v1/policies/default', {
          body: { name: 'Default', agents: ['*'], defaults, ...extra },
        });
        if (answer.status !== 200)
          throw new Error(`policy update failed: ${JSON.stringify(answer.body)}`);
      },
      async forgetAccessToken(seeded) {
        await saveRefreshedTokens(
          db.sql,
          config.encryption,
          seeded.connection.id,
          {
            accessToken: 'forgotten-by-the-app',
            refreshToken: seeded.refreshToken,
            expiresAt: new Date(Date.now() + 3600_000),
          },
          null,
        );
      },
      async restartWorker() {
        await worker.stop();
        worker = await startTestWorker(config, db.sql);
        stack.worker = worker;
      },
      // Last started first: the API, the worker, the demo app, the database, the held port.
      stop: () => stops.stopAll(),
    };
    return stack;
  });
}
