import postgres from 'postgres';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KEY_CHANGE_BOUND_MS, keyCacheOf } from '../../api/http/key-cache.js';
import { revokeKeyCommand } from '../../infra/cli/keys.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { freezeDateAt } from '../support/frozen-date.js';
import { answeredWithinKeyBound } from '../support/key-change.js';
import { testEnv } from '../support/stack-env.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * README "Keys and access": the API keeps recognised keys in memory, and a key
 * revoked or changed, by any path, is refused within KEY_CHANGE_BOUND_MS of the change, the
 * listening connection dropped or not.
 */

let db: TestDatabase;
let api: TestApi;
const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
});

function fundedAccess(key: TestKey): Promise<Response> {
  return fetch(`${api.url}/v1/funded-access`, { headers: bearer(key.key) });
}

async function statusOf(key: TestKey): Promise<number> {
  return (await fundedAccess(key)).status;
}

/** A key the API has recognised, and serves from memory from now on. */
async function cachedKey(options: Parameters<typeof createTestKey>[1]): Promise<TestKey> {
  const key = await createTestKey(db.sql, options);
  for (let i = 0; i < 3; i += 1) expect((await fundedAccess(key)).status).toBe(200);
  return key;
}

/** Resolves once the API's key cache has heard a heartbeat it sent at `time` or later. */
async function heardHeartbeatSentAt(time: number): Promise<void> {
  while (keyCacheOf(db.sql).heardUpTo < time) await sleep(20);
}

/** The backend holding the pool's LISTEN (postgres.js keeps one connection for it). */
async function listeningBackends(): Promise<number[]> {
  const rows = await db.sql<{ pid: number }[]>`
    select pid from pg_stat_activity
    where datname = current_database() and query ilike 'listen %gatehouse_api_keys%'`;
  return rows.map((row) => row.pid);
}

describe('the API key cache', () => {
  it('serves a recognised key from memory: a change no trigger announces is not seen', async () => {
    const key = await createTestKey(db.sql, { env: 'test', access: 'full' });
    // The cache's clock is the test's: a loaded machine cannot make its heartbeats late (which
    // rightly stops it serving from memory), and the bound can pass in an instant. It starts a
    // bound and a half in the past, so that it never runs ahead of the real clock it returns to.
    const realNow = Date.now();
    freezeDateAt(realNow - KEY_CHANGE_BOUND_MS - 500);
    try {
      for (let i = 0; i < 3; i += 1) expect((await fundedAccess(key)).status).toBe(200);
      await db.sql`alter table api_keys disable trigger api_keys_changed`;
      try {
        await db.sql`update api_keys set revoked_at = now() where id = ${key.id}`;
        // Past the bound after the key was read and revoked, and a heartbeat sent since heard:
        // any announcement of the change would have been heard by now.
        jest.setSystemTime(realNow);
        await heardHeartbeatSentAt(realNow);
        // Still served: the cache answered, and only the 60 s backstop would end it.
        expect((await fundedAccess(key)).status).toBe(200);
      } finally {
        await db.sql`alter table api_keys enable trigger api_keys_changed`;
      }
    } finally {
      jest.useRealTimers();
    }
    // Any later change announces the key, and the cache drops it.
    await db.sql`update api_keys set name = name where id = ${key.id}`;
    await answeredWithinKeyBound(() => statusOf(key), 401, Date.now());
  });

  it('refuses a key revoked with `gatehouse keys revoke` within the bound', async () => {
    const key = await cachedKey({ env: 'test', access: 'full' });
    expect(await revokeKeyCommand(db.sql, key.id)).toBe(`revoked key ${key.id}`);
    await answeredWithinKeyBound(() => statusOf(key), 401, Date.now());
  });

  it('applies changed scopes and a deleted key within the bound', async () => {
    const key = await cachedKey({ env: 'test', access: 'full' });
    await db.sql`update api_keys set scopes = ${['auth_configs:read']} where id = ${key.id}`;
    await answeredWithinKeyBound(() => statusOf(key), 403, Date.now());
    await db.sql`delete from api_keys where id = ${key.id}`;
    await answeredWithinKeyBound(() => statusOf(key), 401, Date.now());
  });

  it('keeps the bound while its listening connection is down, and listens again', async () => {
    const key = await cachedKey({ env: 'test', access: 'full' });
    const [listener] = await listeningBackends();
    expect(listener).toBeDefined();
    // No new connection may open, so the dropped LISTEN cannot come back while the key is
    // revoked: its notification is lost. The pool's open connections still answer.
    const [{ name } = { name: '' }] = await db.sql<{ name: string }[]>`
      select current_database() as name`;
    const admin = postgres(testEnv('adminDatabaseUrl'), { max: 1, onnotice: () => undefined });
    await admin.unsafe(`alter database "${name}" allow_connections false`);
    try {
      await db.sql`select pg_terminate_backend(${listener ?? 0})`;
      await db.sql`update api_keys set revoked_at = now() where id = ${key.id}`;
      await answeredWithinKeyBound(() => statusOf(key), 401, Date.now());
    } finally {
      await admin.unsafe(`alter database "${name}" allow_connections true`);
      await admin.end({ timeout: 5 });
    }
    // postgres.js listens again once Postgres takes connections, after its reconnect backoff
    // (which grew while connections were refused): waited for, within the test's time.
    while ((await listeningBackends()).length === 0) await sleep(200);
    const other = await cachedKey({ env: 'test', access: 'full' });
    await revokeKeyCommand(db.sql, other.id);
    await answeredWithinKeyBound(() => statusOf(other), 401, Date.now());
  }, 120_000);
});
