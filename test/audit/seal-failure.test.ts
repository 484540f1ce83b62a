import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { sealAuditActivity, type SealFailureDetails } from '../../activities/audit/seal-audit.js';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { createLogger } from '../../infra/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
const signingKey = parseAuditSigningKey(Buffer.alloc(32, 11).toString('base64'), 'f1');

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
});

/** Checkpoints per environment id. */
async function checkpointCounts(): Promise<Map<string, number>> {
  const rows = await db.sql<{ environmentId: string; count: number }[]>`
    select environment_id, count(*)::int as count from audit_checkpoints group by environment_id`;
  return new Map(rows.map((row) => [row.environmentId, row.count]));
}

describe('the sealAudit activity', () => {
  it('seals every other environment when one fails, logs it, and then fails naming it', async () => {
    const ids: string[] = [];
    for (const name of ['first', 'second', 'third', 'fourth']) {
      const { id } = await ensureEnvironment(db.sql, name);
      await insertSyntheticAuditEvents(db.sql, id, { count: 5, idSeed: name });
      ids.push(id);
    }
    // Environments are sealed in id order: the first of them fails, before all the others.
    const [failing, ...others] = (
      await db.sql<{ id: string }[]>`select id from environments order by id`
    )
      .map((row) => row.id)
      .filter((id) => ids.includes(id));
    // A real failure of the database for that environment alone: its checkpoint is refused.
    await db.sql.unsafe(`
      create function refuse_checkpoint() returns trigger language plpgsql as $$
      begin raise exception 'checkpoint refused for this test'; end; $$;
      create trigger refuse_checkpoint before insert on audit_checkpoints for each row
        when (new.environment_id = '${failing ?? ''}') execute function refuse_checkpoint();`);

    const logs: string[] = [];
    const logger = createLogger(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          logs.push(chunk.toString('utf8'));
          done();
        },
      }),
    );
    const sealAudit = sealAuditActivity({ sql: db.sql, signingKey, settleSeconds: 0, logger });

    const failure = await sealAudit().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    const { type, message, nonRetryable, details } = failure as ApplicationFailure;
    expect(type).toBe('AuditSealFailed');
    expect(nonRetryable).toBe(false);
    expect(message).toContain(`${failing ?? ''}: checkpoint refused for this test`);
    const [reported] = details as [SealFailureDetails];
    expect(reported.failures).toEqual([
      { environmentId: failing, error: 'checkpoint refused for this test' },
    ]);
    expect(reported.checkpoints.map((c) => c.environmentId)).toEqual(others);

    const counts = await checkpointCounts();
    expect(counts.get(failing ?? '')).toBeUndefined();
    for (const id of others) expect(counts.get(id)).toBe(1);
    expect(logs.join('')).toContain(`"environmentId":"${failing ?? ''}"`);

    // Once the fault is gone the next run seals it, and the others have nothing new.
    await db.sql`drop trigger refuse_checkpoint on audit_checkpoints`;
    const result = await sealAudit();
    expect(result.checkpoints.map((c) => c.environmentId)).toEqual([failing]);
  });
});
