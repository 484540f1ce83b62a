import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { SharedLimit } from '../../api/http/shared-limit.js';
import { createLogger } from '../../infra/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A key's count taken from Postgres in blocks: two limiters on one database stand
 * for two API processes. Together they never admit more than the limit, a busy key costs one
 * statement per block, and concurrent requests share one block's statement.
 */
let db: TestDatabase;
const log = createLogger({ level: 'silent' });

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
});

function limiter(points: number, block: number): SharedLimit {
  return new SharedLimit('key', points, { sql: db.sql, timeoutMs: 2000, sweeps: false, block });
}

async function counted(key: string): Promise<number> {
  const [row]: [{ points: number }?] = await db.sql`
    select points from rate_limits where key = ${`key:${key}`}`;
  return row?.points ?? 0;
}

describe('a limit counted in blocks', () => {
  it('admits no more than the limit across processes, refusing at most one block early', async () => {
    const [first, second] = [limiter(200, 10), limiter(200, 10)];
    const key = randomUUID();
    let admitted = 0;
    let refused = 0;
    for (let i = 0; i < 260; i += 1) {
      const verdict = await (i % 3 === 0 ? second : first).consume(key, log);
      if (verdict.limited) {
        refused += 1;
        expect(verdict.retryAfterSeconds).toBeGreaterThanOrEqual(1);
        expect(verdict.retryAfterSeconds).toBeLessThanOrEqual(60);
      } else {
        admitted += 1;
      }
    }
    expect(admitted).toBeLessThanOrEqual(200);
    expect(admitted).toBeGreaterThanOrEqual(200 - 10);
    expect(refused).toBe(260 - admitted);
  });

  it('costs one statement per block, shared by concurrent requests', async () => {
    const one = limiter(6000, 60);
    const key = randomUUID();
    const verdicts = await Promise.all(Array.from({ length: 100 }, () => one.consume(key, log)));
    expect(verdicts.every((verdict) => !verdict.limited)).toBe(true);
    // Two blocks of 60 taken for 100 requests: two statements, not 100.
    expect(await counted(key)).toBe(120);
  });
});
