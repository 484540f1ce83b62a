import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Config } from '../../infra/config.js';
import { connectClient } from '../../infra/temporal/connection.js';
import { healthCheck } from '../../workflows/health-check.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestWorker } from '../support/worker.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let config: Config;
let client: Client;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url);
  started.add(await startTestWorker(config, db.sql));
  client = await connectClient(config.temporal, config.encryption);
  started.push(() => client.connection.close());
});

describe('the worker', () => {
  it('runs a workflow and its activity against the real Temporal server and Postgres', async () => {
    const workflowId = `health/${randomUUID()}`;
    const report = await client.workflow.execute(healthCheck, {
      taskQueue: config.temporal.taskQueue,
      workflowId,
    });
    const [row] = await db.sql<
      { serverVersion: string }[]
    >`select current_setting('server_version') as server_version`;
    expect(report).toEqual({
      taskQueue: config.temporal.taskQueue,
      postgresVersion: row?.serverVersion,
    });

    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const types = (history.events ?? []).map((event) => event.activityTaskCompletedEventAttributes);
    expect(types.filter(Boolean)).toHaveLength(1);
  });
});
