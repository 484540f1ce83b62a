import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Config } from '../../infra/config.js';
import { createSql } from '../../infra/database/client.js';
import { answeredWithin } from '../support/answered-within.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { stopsAfterAll } from '../support/stops.js';

/** Low limits, so that a test reaches them in a few requests. */
const LIMITS = {
  RATE_LIMIT_FAILED_AUTH_PER_MINUTE: '5',
  RATE_LIMIT_PER_KEY_PER_MINUTE: '12',
  RATE_LIMIT_PAGES_PER_MINUTE: '4',
};

let db: TestDatabase;
let config: Config;
/** Two API processes' worth of API on one database, as behind a load balancer. */
let first: TestApi;
let second: TestApi;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url, LIMITS);
  first = started.add(await startTestApi(config, db.sql));
  second = started.add(await startTestApi(config, db.sql));
});

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string;
  body: string;
}

let addresses = 0;

/** A client address of its own (TEST-NET-3), as a reverse proxy on loopback reports it. */
function newAddress(): string {
  addresses += 1;
  return `203.0.113.${String(addresses)}`;
}

async function send(
  api: TestApi,
  path: string,
  options: { from: string; key?: string; headers?: Record<string, string> },
): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, {
    headers: {
      'x-forwarded-for': options.from,
      ...(options.key === undefined ? {} : bearer(options.key)),
      ...options.headers,
    },
    redirect: 'manual',
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

/** A key that has the right shape but belongs to no one: it costs a lookup. */
const wrongKey = () => `gk_test_${randomBytes(24).toString('base64url')}`;

function expectRateLimited(answer: Answer): void {
  expect(answer.status).toBe(429);
  const seconds = Number(answer.retryAfter);
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(JSON.parse(answer.body)).toEqual({
    error: { code: 'rate_limited', message: expect.any(String), retryable: true },
  });
}

describe('failed authentications per client address', () => {
  it('answers 429 rate_limited with Retry-After once an address passes its limit', async () => {
    const from = newAddress();
    for (let i = 0; i < 5; i += 1) {
      expect((await send(first, '/v1/funded-access', { from, key: wrongKey() })).status).toBe(401);
    }
    expectRateLimited(await send(first, '/v1/funded-access', { from, key: wrongKey() }));
    // Every kind of failure counts, a missing key included, and stays refused.
    expectRateLimited(await send(first, '/v1/funded-access', { from }));
    expectRateLimited(await send(first, '/v1/proxy/acme/tasks', { from, key: 'not-a-key' }));
  });

  it('counts wrong MCP addresses and keys at /mcp like any other credential', async () => {
    const from = newAddress();
    const unknownAddress = () => `/mcp/gkmcp_${randomBytes(24).toString('base64url')}`;
    // Five failures of either kind are allowed (the test limit), the sixth is refused.
    for (let i = 0; i < 2; i += 1) {
      expect((await send(first, unknownAddress(), { from })).status).toBe(401);
      expect((await send(first, '/mcp', { from, key: wrongKey() })).status).toBe(401);
    }
    expect((await send(first, unknownAddress(), { from })).status).toBe(401);
    for (const path of [unknownAddress(), '/mcp']) {
      const limited = await send(first, path, { from, key: wrongKey() });
      expect(limited.status).toBe(429);
      expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  it('still serves a valid key from that address, and other addresses', async () => {
    const from = newAddress();
    const key = await createTestKey(db.sql, { env: 'test', access: 'full', audience: 'business' });
    for (let i = 0; i < 6; i += 1) await send(first, '/v1/funded-access', { from });
    expectRateLimited(await send(first, '/v1/funded-access', { from }));
    expect((await send(first, '/v1/funded-access', { from, key: key.key })).status).toBe(200);
    expect((await send(first, '/v1/funded-access', { from: newAddress() })).status).toBe(401);
  });

  it('shares the count between API processes on one database', async () => {
    const from = newAddress();
    for (const api of [first, second, first, second, second]) {
      expect((await send(api, '/v1/funded-access', { from, key: wrongKey() })).status).toBe(401);
    }
    expectRateLimited(await send(first, '/v1/funded-access', { from, key: wrongKey() }));
    expectRateLimited(await send(second, '/v1/funded-access', { from, key: wrongKey() }));
  });

  it('counts an IPv6 client by its /64, so that rotating addresses in it does not help', async () => {
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:1`;
    for (let i = 1; i <= 5; i += 1) {
      const from = `${prefix}::${String(i)}`;
      expect((await send(second, '/v1/funded-access', { from })).status).toBe(401);
    }
    expectRateLimited(await send(second, '/v1/funded-access', { from: `${prefix}::ffff` }));
  });
});

describe('the codec endpoint and its sign-in form, at the default limit', () => {
  /** The production limit (30 wrong keys a minute), not a lower one set for tests. */
  let api: TestApi;
  let full: TestKey;

  const started = stopsAfterAll();
  beforeAll(async () => {
    api = started.add(await startTestApi(testConfig(db.url), db.sql));
    full = await createTestKey(db.sql, { env: 'test', access: 'full' });
  });

  const codec = (path: string, from: string, key?: string) =>
    fetch(`${api.url}/codec/${path}`, {
      method: 'POST',
      headers: {
        'x-forwarded-for': from,
        'content-type': 'application/json',
        ...(key === undefined ? {} : bearer(key)),
      },
      body: '{"payloads":[]}',
    });

  const signIn = (from: string, key: string) =>
    fetch(`${api.url}/codec/session`, {
      method: 'POST',
      headers: {
        'x-forwarded-for': from,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        accept: 'text/html',
      },
      body: new URLSearchParams({ key }).toString(),
    });

  async function answer(response: Response): Promise<Answer> {
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      contentType: response.headers.get('content-type') ?? '',
      body: await response.text(),
    };
  }

  it('answers the 31st wrong key in a minute at /codec/decode and /codec/encode 429 with Retry-After', async () => {
    for (const path of ['decode', 'encode']) {
      const from = newAddress();
      for (let i = 0; i < 30; i += 1) {
        expect((await codec(path, from, wrongKey())).status).toBe(401);
      }
      expectRateLimited(await answer(await codec(path, from, wrongKey())));
      expectRateLimited(await answer(await codec(path, from)));
      // The count is the address's, shared with /v1; a full key from there is still served.
      expectRateLimited(await send(api, '/v1/funded-access', { from, key: wrongKey() }));
      expect((await codec(path, from, full.key)).status).toBe(200);
    }
  });

  it('answers the 31st wrong key in a minute at the sign-in form with a 429 page and Retry-After', async () => {
    const from = newAddress();
    for (let i = 0; i < 30; i += 1) {
      const refused = await signIn(from, wrongKey());
      expect(refused.status).toBe(401);
      expect(refused.headers.get('set-cookie')).toBeNull();
    }
    const limited = await answer(await signIn(from, wrongKey()));
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    expect(limited.contentType).toMatch(/^text\/html/);
    expect(limited.body).toContain('Too many sign-in attempts');
    // The decode endpoint shares the count.
    expectRateLimited(await answer(await codec('decode', from, wrongKey())));
    const signedIn = await signIn(from, full.key);
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^gatehouse_codec=/);
  });
});

describe('requests per API key', () => {
  let busy: TestKey;
  let other: TestKey;

  beforeAll(async () => {
    busy = await createTestKey(db.sql, { env: 'test', access: 'full', audience: 'business' });
    other = await createTestKey(db.sql, { env: 'test', access: 'full', audience: 'business' });
  });

  it('refuses a key past its limit, across processes, and leaves other keys alone', async () => {
    const from = newAddress();
    for (let i = 0; i < 12; i += 1) {
      const api = i % 2 === 0 ? first : second;
      expect((await send(api, '/v1/funded-access', { from, key: busy.key })).status).toBe(200);
    }
    expectRateLimited(await send(first, '/v1/funded-access', { from, key: busy.key }));
    expectRateLimited(await send(second, '/v1/funded-access', { from, key: busy.key }));
    // The same address, another key: unaffected.
    expect((await send(second, '/v1/funded-access', { from, key: other.key })).status).toBe(200);
    // Counted by key id: the key itself is never stored.
    const rows = await db.sql<{ key: string; points: number }[]>`
      select key, points from rate_limits where key like 'key:%'`;
    expect(rows).toContainEqual({ key: `key:${busy.id}`, points: 14 });
    expect(JSON.stringify(rows)).not.toContain(busy.key);
  });
});

describe('hosted pages per client address', () => {
  it('limits the connect and approval pages together, whatever the case of the path', async () => {
    const from = newAddress();
    const token = () => randomBytes(32).toString('base64url');
    const html = { accept: 'text/html' };
    for (const path of ['/connect/', '/CONNECT/', '/approvals/review/', '/Approvals/Review/']) {
      const answer = await send(first, `${path}${token()}`, { from, headers: html });
      expect(answer.status).toBe(404);
    }
    const page = await send(second, `/connect/${token()}`, { from, headers: html });
    expect(page.status).toBe(429);
    expect(Number(page.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.body).toContain('rate_limited');
    expectRateLimited(await send(first, `/approvals/review/${token()}`, { from }));
    // Another address still reaches the page.
    expect((await send(first, `/connect/${token()}`, { from: newAddress() })).status).toBe(404);
  });
});

describe('RATE_LIMIT_ENABLED=false', () => {
  it('limits nothing', async () => {
    const api = await startTestApi(
      testConfig(db.url, { ...LIMITS, RATE_LIMIT_ENABLED: 'false' }),
      db.sql,
    );
    try {
      const from = newAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 8; i += 1) {
        statuses.push((await send(api, '/v1/funded-access', { from })).status);
        statuses.push((await send(api, `/connect/${String(i)}`, { from })).status);
      }
      expect(new Set(statuses)).toEqual(new Set([401, 404]));
    } finally {
      await api.close();
    }
  });
});

describe('with Postgres frozen or gone', () => {
  it('limits in the process alone, within its time bound, and never answers 500', async () => {
    const isolated = await createTestDatabase();
    const direct = new URL(isolated.url);
    const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port) });
    const proxied = new URL(isolated.url);
    proxied.host = `${proxy.host}:${String(proxy.port)}`;
    // The pool would wait two minutes for the frozen Postgres (no timeout of its own ends the
    // wait sooner): a request answered long before that did not wait for Postgres.
    const sql = createSql(proxied.toString(), {
      max: 2,
      connectTimeoutMs: 120_000,
      statementTimeoutMs: 120_000,
      idleInTransactionTimeoutMs: 120_000,
    });
    const api = await startTestApi(
      testConfig(isolated.url, { ...LIMITS, RATE_LIMIT_TIMEOUT_MS: '300' }),
      sql,
    );
    try {
      const frozen = newAddress();
      expect((await send(api, '/v1/funded-access', { from: frozen })).status).toBe(401);
      proxy.pause();
      // A key of the wrong shape is refused without a lookup: only the limiter needs Postgres.
      // Each request waits for the limiter at most its bound (300 ms), not for Postgres: all six
      // are answered, within a budget far above 6 x 300 ms (for a loaded machine) and far below
      // the two minutes a wait for Postgres would take.
      const statuses = await answeredWithin(
        'six requests while Postgres is frozen',
        30_000,
        (async () => {
          const answered: number[] = [];
          for (let i = 0; i < 6; i += 1) {
            answered.push((await send(api, '/v1/funded-access', { from: frozen })).status);
          }
          return answered;
        })(),
      );
      // The first failure was counted in Postgres; the rest in this process: 5 + 1 refused.
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect(api.logs.some((line) => line.includes('rate limiter store'))).toBe(true);

      await proxy.close();
      const gone = newAddress();
      const answers: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        answers.push((await send(api, '/v1/funded-access', { from: gone })).status);
      }
      expect(answers).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await api.close();
      await sql.end({ timeout: 1 });
      await proxy.close();
      await isolated.drop();
    }
  }, 60_000);
});
