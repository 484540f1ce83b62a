import { beforeAll, describe, expect, it } from '@jest/globals';
import { listActions } from '../../workflows/catalog/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let reader: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  reader = await createTestKey(db.sql, { access: 'read_only' });
});

const get = async (path: string) => {
  const response = await fetch(`${api.url}${path}`, { headers: bearer(reader.key) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('GET /v1/actions', () => {
  it('lists every action of the catalog, or of one app', async () => {
    const all = (await get('/v1/actions')).body.data as { action: string; scope: string }[];
    expect(all).toHaveLength(listActions().length);
    expect(all.length).toBeGreaterThanOrEqual(35);
    const acme = (await get('/v1/actions?app=acme')).body.data as {
      action: string;
      scope: string;
    }[];
    expect(acme.map((a) => [a.action, a.scope])).toEqual([
      ['acme.list_tasks', 'read'],
      ['acme.get_task', 'read'],
      ['acme.create_task', 'write'],
      ['acme.update_task', 'write'],
      ['acme.delete_task', 'destructive'],
    ]);
    expect((await get('/v1/actions?app=nope')).body).toEqual({ data: [] });
    expect((await get('/v1/actions?colour=red')).status).toBe(400);
  });

  it("publishes an action's input as JSON Schema", async () => {
    const { status, body } = await get('/v1/actions/acme.create_task');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      action: 'acme.create_task',
      app: 'acme',
      scope: 'write',
      input_schema: {
        type: 'object',
        properties: { title: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['title'],
        additionalProperties: false,
      },
    });
    expect((await get('/v1/actions/acme.nope')).status).toBe(404);
  });

  it('can publish the input schema of every action in the catalog', async () => {
    for (const action of listActions()) {
      const { status, body } = await get(`/v1/actions/${action.app}.${action.name}`);
      expect([action.name, status]).toEqual([action.name, 200]);
      expect((body.input_schema as { type: string }).type).toBe('object');
    }
  });
});
