import { Writable } from 'node:stream';
import type { Client } from '@temporalio/client';
import { startApiServer } from '../../api/server.js';
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

/** The real API on a random port, with its log lines captured for inspection. */
export async function startTestApi(
  config: Config,
  sql: Sql,
  options: { temporal?: Client } = {},
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
  const api = await startApiServer({ config, sql, temporal, logger });
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
