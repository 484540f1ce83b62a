import { beforeAll, describe, expect, it } from '@jest/globals';
import { insertAuditEvents, type NewAuditEvent } from '../../activities/db/audit-events.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import {
  eventHash,
  hashedEventColumns,
  type HashedEventRow,
} from '../../activities/audit/canonical-event.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let environmentId: string;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  environmentId = (await ensureEnvironment(db.sql, 'test')).id;
});

function event(overrides: Partial<NewAuditEvent>): NewAuditEvent {
  return {
    environmentId,
    action: 'acme.create_task',
    scope: 'write',
    decision: 'allowed',
    reason: null,
    agentId: 'agent',
    via: 'api',
    userExternalId: 'u_1',
    connectedUserId: null,
    connectionId: null,
    approvalId: null,
    request: { action: 'acme.create_task' },
    response: null,
    traceId: 'trace',
    policyId: null,
    policyVersion: null,
    ...overrides,
  };
}

const awkward = 'naïve “quotes” \\ "\n\t\b\f\r \u0001\u001f\u007f \u2028\u2029 😀 / </script> 𝄞';
const big: Record<string, unknown> = {};
for (let i = 0; i < 2000; i += 1)
  big[`k${String(i)}`] = { n: i * 1.5, s: awkward, z: [null, true] };

describe('the audit event hash', () => {
  it('is the same in SQL (at insert) and in TypeScript (verify), whatever the content', async () => {
    const ids = await insertAuditEvents(db.sql, [
      event({}),
      event({ reason: awkward, userExternalId: null, scope: null, agentId: awkward }),
      event({
        request: { b: 1, a: [1.0, 1e2, Number.MAX_SAFE_INTEGER, -0.5], ü: awkward, '': null },
        response: { ok: true, nested: { deep: { deeper: [awkward] } } },
        policyId: 'default',
        policyVersion: 3,
        grantId: '0198f2d0-3b7c-7e11-a4c2-9d8e7f6a5b43',
      }),
      event({ request: big, response: big, reason: 'Ship \u0000 it' }),
    ]);
    const rows = await db.sql<HashedEventRow[]>`
      select ${hashedEventColumns(db.sql)} from audit_events where id = any(${ids}::uuid[])`;
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(eventHash(row).toString('hex')).toBe(row.hash.toString('hex'));
  });

  it('agrees at every millisecond of a time with microseconds', async () => {
    const [id = ''] = await insertAuditEvents(db.sql, [event({})]);
    for (const micros of ['000999', '123456', '999999', '500500']) {
      await db.sql`
        update audit_events set time = ${`2026-03-02T09:00:00.${micros}Z`}::timestamptz
        where id = ${id}`;
      const [row] = await db.sql<(HashedEventRow & { sqlHash: Buffer })[]>`
        select ${hashedEventColumns(db.sql)},
          sha256(convert_to(audit_event_canonical(id, environment_id, time, action, scope, decision,
            reason, agent_id, via, user_external_id, connected_user_id, connection_id, approval_id,
            request, response, trace_id, policy_id, policy_version, grant_id), 'UTF8')) as sql_hash
        from audit_events where id = ${id}`;
      if (!row) throw new Error('the row is gone');
      expect(eventHash(row).toString('hex')).toBe(row.sqlHash.toString('hex'));
    }
  });
});
