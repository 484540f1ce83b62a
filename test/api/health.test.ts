import { beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { createSql } from '../../infra/database/client.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
});

describe('health endpoints', () => {
  it('answers /healthz without a key', async () => {
    const response = await fetch(`${api.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('serves a favicon under both names a browser asks for, without a key', async () => {
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const response = await fetch(`${api.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await response.text()).toMatch(/^<svg /);
    }
  });

  it('answers /readyz when Postgres and Temporal are reachable', async () => {
    const response = await fetch(`${api.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', temporal: 'ok' },
    });
  });

  it('reports not ready, naming the dependency, when Temporal is unreachable', async () => {
    // No retry interceptor: its retry timer could fire after the connection is closed below
    // and throw "Channel has been shut down" into whatever test runs next.
    const connection = Connection.lazy({
      address: '127.0.0.1:1',
      connectTimeout: 500,
      interceptors: [],
    });
    const temporal = new Client({ connection });
    const isolated = await startTestApi(testConfig(db.url), db.sql, { temporal });
    try {
      const response = await fetch(`${isolated.url}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as {
        error: { code: string; checks: unknown; retryable: boolean };
      };
      expect(body.error).toMatchObject({
        code: 'service_unavailable',
        retryable: true,
        checks: { postgres: 'ok', temporal: 'unreachable' },
      });
    } finally {
      await isolated.close();
      await connection.close();
    }
  });

  it('reports not ready when Postgres is unreachable', async () => {
    const deadSql = createSql('postgres://nobody:x@127.0.0.1:1/none', { max: 1 });
    const isolated = await startTestApi(testConfig(db.url), deadSql, { temporal: api.temporal });
    try {
      const response = await fetch(`${isolated.url}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { error: { checks: unknown } };
      expect(body.error.checks).toEqual({ postgres: 'unreachable', temporal: 'ok' });
    } finally {
      await isolated.close();
      await deadSql.end({ timeout: 1 });
    }
  });
});
