import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createAuthConfig } from '../../activities/db/auth-configs.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { CONNECT_CALLBACK_PATH } from '../../activities/oauth/redirect-uri.js';
import type { Config } from '../../infra/config.js';
import { startDemoApp, type DemoApp } from '../../infra/demo-app/index.js';
import { holdApiPort, startTestApi, type TestApi } from './api.js';
import { testConfig } from './config.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { createTestKey, type TestKey } from './keys.js';
import { startOrUndo } from './stops.js';
import { startTestWorker, type TestWorker } from './worker.js';

export interface ConnectStack {
  db: TestDatabase;
  config: Config;
  demo: DemoApp;
  api: TestApi;
  worker: TestWorker;
  temporal: Client;
  key: TestKey;
  environmentId: string;
  client: { clientId: string; clientSecret: string };
  stop(): Promise<void>;
}

/**
 * Everything a connect flow touches, for real: a database, the demo OAuth app with Gatehouse
 * registered as its client, an auth config for `acme`, a worker and the API on a known port
 * (the OAuth redirect must reach it).
 */
export async function startConnectStack(
  options: { accessTokenTtlSeconds?: number; env?: Record<string, string> } = {},
): Promise<ConnectStack> {
  return startOrUndo(async (stops) => {
    // Held before the configuration names it: the OAuth redirect comes back to it.
    const listening = stops.add(await holdApiPort());
    const db = stops.add(await createTestDatabase());
    const demo = stops.add(
      await startDemoApp({ accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3600 }),
    );
    const config = testConfig(db.url, {
      API_PORT: String(listening.port),
      APP_URLS: JSON.stringify({ acme: demo.url }),
      ...options.env,
    });
    const client = { clientId: 'gatehouse-test', clientSecret: randomBytes(16).toString('hex') };
    await demo.registerClient({
      ...client,
      redirectUris: [`${config.api.publicUrl}${CONNECT_CALLBACK_PATH}`],
    });
    const environment = await ensureEnvironment(db.sql, 'test');
    await createAuthConfig(db.sql, config.encryption, {
      environmentId: environment.id,
      app: 'acme',
      name: 'demo client',
      ...client,
    });
    const worker = stops.add(await startTestWorker(config, db.sql));
    const api = stops.add(await startTestApi(config, db.sql, { listening }));
    const key = await createTestKey(db.sql, { env: 'test', access: 'full', agentId: 'test-agent' });
    return {
      db,
      config,
      demo,
      api,
      worker,
      temporal: api.temporal,
      key,
      environmentId: environment.id,
      client,
      // Last started first: the API, the worker, the demo app, the database, the held port.
      stop: () => stops.stopAll(),
    };
  });
}

export async function createLink(
  stack: ConnectStack,
  body: Record<string, unknown>,
  key: string = stack.key.key,
): Promise<Response> {
  return fetch(`${stack.api.url}/v1/connect/links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
