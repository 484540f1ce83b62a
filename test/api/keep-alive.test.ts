import { beforeAll, describe, expect, it } from '@jest/globals';
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

describe('idle connections', () => {
  it('are kept for 65 s and said so, longer than the clients and load balancers that reuse them', async () => {
    const res = await fetch(`${api.url}/healthz`);
    await res.text();
    expect(res.headers.get('keep-alive')).toBe('timeout=65');
  });
});
