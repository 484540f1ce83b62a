import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/** A policy's versions stay readable, as a list and one by number. */
let db: TestDatabase;
let api: TestApi;
let admin: TestKey;
let reader: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  admin = await createTestKey(db.sql, { env: 'versions', access: 'full', agentId: 'ops-console' });
  reader = await createTestKey(db.sql, { env: 'versions', access: 'read_only' });
  // Versions 2 to 5 of `default`, each asking for one more kind of write.
  for (const decision of ['allow', 'ask', 'deny', 'ask'] as const) {
    const put = await get(admin, '/v1/policies/default', 'PUT', {
      defaults: { read: 'allow', write: decision, destructive: 'deny' },
    });
    expect(put.status).toBe(200);
  }
});

async function get(key: TestKey, path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface Page {
  data: { version: number; defaults: { write: string }; updated_by: string }[];
  cursor: string | null;
}

describe('GET /v1/policies/{id}/versions', () => {
  it('lists every version newest first, page by page, each as it was written', async () => {
    const first = await get(reader, '/v1/policies/default/versions?limit=2');
    expect(first.status).toBe(200);
    const page1 = first.body as unknown as Page;
    expect(page1.data.map((v) => [v.version, v.defaults.write, v.updated_by])).toEqual([
      [5, 'ask', 'ops-console'],
      [4, 'deny', 'ops-console'],
    ]);
    expect(page1.data[0]).toMatchObject({
      id: 'default',
      environment: 'versions',
      agents: ['*'],
      rules: [],
      approval: { requested_from: [], ttl_seconds: 86400 },
    });
    const page2 = (
      await get(reader, `/v1/policies/default/versions?limit=2&cursor=${page1.cursor ?? ''}`)
    ).body as unknown as Page;
    expect(page2.data.map((v) => v.version)).toEqual([3, 2]);
    const page3 = (
      await get(reader, `/v1/policies/default/versions?limit=2&cursor=${page2.cursor ?? ''}`)
    ).body as unknown as Page;
    expect(page3).toMatchObject({ cursor: null });
    expect(page3.data.map((v) => [v.version, v.defaults.write, v.updated_by])).toEqual([
      [1, 'ask', 'gatehouse'],
    ]);
    const all = (await get(reader, '/v1/policies/default/versions')).body as unknown as Page;
    expect(all.data.map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
    expect(all.cursor).toBeNull();
  });

  it('reads one version by number, as the list shows it', async () => {
    const one = await get(reader, '/v1/policies/default/versions/3');
    const all = (await get(reader, '/v1/policies/default/versions')).body as unknown as Page;
    expect(one).toEqual({ status: 200, body: all.data.find((v) => v.version === 3) });
    expect((await get(reader, '/v1/policies/default/versions/6')).status).toBe(404);
  });

  it('answers 404 for an unknown policy and 400 for a cursor it did not make', async () => {
    expect(await get(reader, '/v1/policies/nowhere/versions')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: 'Policy "nowhere" not found' } },
    });
    for (const cursor of ['djA', 'bm9wZQ', 'v3', Buffer.from('v03').toString('base64url')]) {
      expect(await get(reader, `/v1/policies/default/versions?cursor=${cursor}`)).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_request', issues: [{ path: 'cursor' }] } },
      });
    }
    expect((await get(reader, '/v1/policies/default/versions?limit=101')).status).toBe(400);
    const other = await createTestKey(db.sql, { env: 'other-versions', access: 'full' });
    expect((await get(other, '/v1/policies/default/versions')).body).toMatchObject({
      data: [{ environment: 'other-versions', version: 1 }],
    });
  });
});
