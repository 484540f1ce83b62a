import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Client } from '@temporalio/client';
import { createApiHttpServer, startApiServer } from '../../api/server.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { createLogger } from '../../infra/logger.js';
import { connectClient } from '../../infra/temporal/connection.js';

export interface TestApi {
  url: string;
  /** Every log line the API wrote, as raw JSON text. */
  logs: string[];
  temporal: Client;
  close(): Promise<void>;
}

/**
 * The API's HTTP server, already listening on a port the OS chose, for a configuration that must
 * name the API's port before the API starts (OAuth redirect URIs, approval links, all built from
 * PUBLIC_URL): the port is held from here on, so no other program can take it between choosing
 * and serving. Give it to `startTestApi`, which serves on it; `close` is for a set-up that fails
 * before that.
 */
export interface HeldApiPort {
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function holdApiPort(): Promise<HeldApiPort> {
  const server = createApiHttpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => {
          resolve();
        });
      }),
  };
}

/**
 * The real API, with its log lines captured for inspection: on `listening` when given (the port
 * the configuration names), else on a free port of its own, whatever the configuration names
 * (a second API of a stack answers for the stack's PUBLIC_URL, as behind a load balancer).
 */
export async function startTestApi(
  config: Config,
  sql: Sql,
  options: { temporal?: Client; listening?: HeldApiPort } = {},
): Promise<TestApi> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: config.logLevel }, sink);
  const temporal = options.temporal ?? (await connectClient(config.temporal, config.encryption));
  const api = await startApiServer(
    { config, sql, temporal, logger },
    options.listening?.server ?? 0,
  );
  return {
    url: api.url,
    logs,
    temporal,
    async close() {
      await api.close();
      if (!options.temporal) await temporal.connection.close();
    },
  };
}
