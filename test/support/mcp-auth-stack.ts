import { Writable } from 'node:stream';
import { ensureEnvironment } from '../../activities/db/environments.js';
import type { Config } from '../../infra/config.js';
import { createLogger } from '../../infra/logger.js';
import { holdApiPort, startTestApi, type TestApi } from './api.js';
import { testConfig } from './config.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { createTestKey, type TestKey } from './keys.js';
import { startOrUndo } from './stops.js';
import { startTestWorker, type TestWorker } from './worker.js';

/**
 * What connecting users to remote MCP apps touches: a database, a worker, the API on a
 * known port (authorization servers redirect back to it) and a full key of environment `test`.
 */
export interface McpAuthStack {
  db: TestDatabase;
  config: Config;
  api: TestApi;
  worker: TestWorker;
  key: TestKey;
  environmentId: string;
  /** The worker's log lines (warnings and up), as raw JSON text. */
  workerLogs: string[];
  stop(): Promise<void>;
}

export async function startMcpAuthStack(
  options: { env?: Record<string, string> } = {},
): Promise<McpAuthStack> {
  return startOrUndo(async (stops) => {
    // Held before the configuration names it: authorization servers redirect back to it.
    const listening = stops.add(await holdApiPort());
    const db = stops.add(await createTestDatabase());
    const config = testConfig(db.url, { API_PORT: String(listening.port), ...options.env });
    const environment = await ensureEnvironment(db.sql, 'test');
    const workerLogs: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        workerLogs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const worker = stops.add(
      await startTestWorker(config, db.sql, { logger: createLogger({ level: 'warn' }, sink) }),
    );
    const api = stops.add(await startTestApi(config, db.sql, { listening }));
    const key = await createTestKey(db.sql, { env: 'test', access: 'full', agentId: 'operator' });
    return {
      db,
      config,
      api,
      worker,
      key,
      environmentId: environment.id,
      workerLogs,
      // Last started first: the API, the worker, the database, the held port.
      stop: () => stops.stopAll(),
    };
  });
}

/**
 * A remote MCP server registered as an app of the stack's environment, written straight to the
 * table (registration through the management interface has tests of its own).
 */
export async function registerMcpApp(
  stack: McpAuthStack,
  app: { id: string; name: string; serverUrl: string },
): Promise<void> {
  await stack.db.sql`
    insert into mcp_apps (environment_id, id, name, server_url, auth, updated_by)
    values (${stack.environmentId}, ${app.id}, ${app.name}, ${app.serverUrl}, 'oauth', 'test')`;
}

/** A call to the API with the stack's full key. */
export function api(
  stack: McpAuthStack,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${stack.api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.key.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
