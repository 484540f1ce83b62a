import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { checkpointOver, sealEnvironment } from '../../activities/audit/seal-audit.js';
import {
  insertCheckpoint,
  registerSigningKey,
  sealableUpTo,
} from '../../activities/db/audit-checkpoints.js';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const SEED = Buffer.alloc(32, 13).toString('base64');
const signingKey = parseAuditSigningKey(SEED, 'r1');

let db: TestDatabase;
let api: TestApi;
let forked: TestKey;
let healthyId: string;
let tamperedId: string;
/** Each environment's event count, by id. */
const events = new Map<string, number>();

async function addEvents(environmentId: string, count: number): Promise<void> {
  const from = (events.get(environmentId) ?? 0) + 1;
  await insertSyntheticAuditEvents(db.sql, environmentId, {
    from,
    count,
    idSeed: environmentId,
  });
  events.set(environmentId, from + count - 1);
}

/**
 * A seal as the code before the fix made it: the predecessor found by ordering last_seq as its
 * text alias, so once seq passes a power of ten it chains to an old checkpoint and the trail forks.
 */
async function sealAsTheOldCodeDid(environmentId: string): Promise<void> {
  await db.sql.begin(async (sql) => {
    const [previous] = await sql<{ lastSeq: string; hash: Buffer }[]>`
      select last_seq::text as last_seq, hash from audit_checkpoints
      where environment_id = ${environmentId} order by last_seq desc limit 1`;
    const lastSeq = await sealableUpTo(sql, environmentId, previous?.lastSeq ?? '0', 0);
    if (lastSeq === null) throw new Error('nothing to seal');
    const [clock] = await sql<{ now: Date }[]>`select now()`;
    const checkpoint = await checkpointOver(
      sql,
      signingKey,
      environmentId,
      previous ?? null,
      lastSeq,
      clock?.now ?? new Date(),
    );
    if (!checkpoint) throw new Error('nothing to seal');
    // Such forks were stored before the database refused them (migration 025): insert it as then.
    await sql`set local session_replication_role = replica`;
    await insertCheckpoint(sql, checkpoint);
  });
}

/** Seals by the old code, one after each batch of `counts` events. */
async function forkedTrail(environmentId: string, counts: number[]): Promise<void> {
  for (const count of counts) {
    await addEvents(environmentId, count);
    await sealAsTheOldCodeDid(environmentId);
  }
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(['audit', ...args], { DATABASE_URL: db.url, ...env });
const withKey = { AUDIT_SIGNING_KEY: SEED, AUDIT_SIGNING_KEY_ID: 'r1' };

interface Row {
  id: string;
  lastSeq: string;
  supersededBy: string | null;
  supersededAt: Date | null;
}

const checkpointRows = (environmentId: string) =>
  db.sql<Row[]>`
    select id, last_seq, superseded_by, superseded_at from audit_checkpoints
    where environment_id = ${environmentId} order by last_seq, superseded_at is null, id`;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  await registerSigningKey(db.sql, signingKey);
  forked = await createTestKey(db.sql, { env: 'forked', access: 'full' });
  healthyId = (await createTestKey(db.sql, { env: 'healthy', access: 'full' })).environmentId;
  tamperedId = (await createTestKey(db.sql, { env: 'tampered', access: 'full' })).environmentId;
  // seq 1-4, 5-9 and 10-12 sealed in order; then '9' is the text-newest of 4, 9, 12 (and of every
  // two-or-three-digit seq after), so the next 5 seals each fork after 9 (up to seq 162).
  await forkedTrail(forked.environmentId, [4, 5, 3, 20, 30, 50, 10, 40]);
  for (const count of [7, 90]) {
    await addEvents(healthyId, count);
    await sealEnvironment({ sql: db.sql, signingKey, settleSeconds: 0 }, healthyId);
  }
  // From seq 260: sealed up to 359, 559, 859 and 1059, then two forks after 859 (to 1159).
  await forkedTrail(tamperedId, [100, 200, 300, 200, 50, 50]);
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
}, 120_000);

describe('gatehouse audit repair', () => {
  it('mends a forked trail: the old checkpoints kept and marked, their events resealed, verify passing', async () => {
    const env = forked.environmentId;
    const broken = await cli(['verify', '--env', 'forked']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('does not chain to checkpoint');

    // The code after the fix, before the repair: it follows the newest checkpoint, a fork.
    await addEvents(env, 25);
    await sealEnvironment({ sql: db.sql, signingKey, settleSeconds: 0 }, env);
    const before = await checkpointRows(env);
    expect(before).toHaveLength(9);
    // By seq: 4, 9 and 12 chain; the 6 after them (each after seq 9, then the fixed seal's) do not.
    const [good, off] = [before.slice(0, 3), before.slice(3)];

    const dry = await cli(['repair', '--env', 'forked', '--dry-run'], withKey);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toContain('would supersede 6 checkpoints');
    expect(await checkpointRows(env)).toEqual(before);

    const repaired = await cli(['repair', '--env', 'forked'], withKey);
    expect(repaired).toMatchObject({ code: 0, stderr: '' });
    expect(repaired.stdout).toContain(`does not follow checkpoint ${good[2]?.id ?? ''}`);
    expect(repaired.stdout).toContain('superseded 6 checkpoints');
    expect(repaired.stdout).toContain('resealed in 6 checkpoints');

    const [repair] = await db.sql<
      { id: string; supersededIds: string[]; afterCheckpointId: string }[]
    >`
      select id, superseded_ids, after_checkpoint_id from audit_repairs where environment_id = ${env}`;
    expect(repair?.afterCheckpointId).toBe(good[2]?.id);
    expect([...(repair?.supersededIds ?? [])].sort()).toEqual(off.map((row) => row.id).sort());

    // Nothing deleted: every checkpoint is still there, the good ones untouched, the others marked.
    const after = await checkpointRows(env);
    expect(after).toHaveLength(15);
    for (const row of good) expect(after).toContainEqual(row);
    for (const row of off) {
      expect(after).toContainEqual({
        ...row,
        supersededBy: repair?.id,
        supersededAt: expect.any(Date),
      });
    }
    const chain = after.filter((row) => row.supersededBy === null);
    expect(chain.map((row) => row.lastSeq)).toEqual(before.map((row) => row.lastSeq));

    const keys = path.join(tmpdir(), `gatehouse-repair-keys-${String(process.pid)}.json`);
    await writeFile(keys, JSON.stringify({ r1: signingKey.publicKeyPem }));
    for (const args of [[], ['--public-keys', keys]]) {
      const verified = await cli(['verify', '--env', 'forked', ...args]);
      expect(verified).toMatchObject({ code: 0, stderr: '' });
      expect(verified.stdout).toContain(
        `audit trail intact: 9 checkpoints, ${String(events.get(env))} events; 6 superseded checkpoints kept, by 1 repair`,
      );
      expect(verified.stdout).toContain(`repair ${repair?.id ?? ''}`);
    }

    // A second run finds nothing to do; the next seal follows the new chain.
    const again = await cli(['repair', '--env', 'forked'], withKey);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toContain('chain intact, nothing to repair');
    await addEvents(env, 5);
    expect(await sealEnvironment({ sql: db.sql, signingKey, settleSeconds: 0 }, env)).toMatchObject(
      { eventCount: 5 },
    );
    const later = await cli(['verify', '--env', 'forked']);
    expect(later).toMatchObject({ code: 0, stderr: '' });
    expect(later.stdout).toContain('audit trail intact: 10 checkpoints');

    // The listing shows every checkpoint once, superseded ones marked; the export names the chain's.
    const rows = await checkpointRows(env);
    const listed: { id: string; superseded_by: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`;
      const response = await fetch(`${api.url}/v1/audit/checkpoints${query}`, {
        headers: bearer(forked.key),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: typeof listed; cursor: string | null };
      listed.push(...body.data);
      cursor = body.cursor;
    } while (cursor !== null);
    expect(listed.map((c) => c.id)).toEqual(rows.map((row) => row.id));
    expect(listed.map((c) => c.superseded_by)).toEqual(rows.map((row) => row.supersededBy));

    const onChain = new Set(rows.filter((row) => row.supersededBy === null).map((row) => row.id));
    const lines = (
      await (await fetch(`${api.url}/v1/audit/export`, { headers: bearer(forked.key) })).text()
    )
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { checkpoint_id: string | null });
    expect(lines).toHaveLength(events.get(env) ?? 0);
    expect(
      lines.every((line) => line.checkpoint_id !== null && onChain.has(line.checkpoint_id)),
    ).toBe(true);
  }, 120_000);

  it('leaves an intact chain alone', async () => {
    const before = await checkpointRows(healthyId);
    const result = await cli(['repair', '--env', 'healthy'], withKey);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('environment healthy: chain intact, nothing to repair');
    expect(await checkpointRows(healthyId)).toEqual(before);
  });

  it('refuses to reseal a fork whose events were edited, changing nothing', async () => {
    // An event sealed only by the forks, edited with its hash recomputed: resealing would bless it.
    const [edited] = await db.sql<{ id: string }[]>`
      update audit_events set reason = 'nothing to see', hash = sha256(convert_to(
        audit_event_canonical(id, environment_id, time, action, scope, decision, 'nothing to see',
        agent_id, via, user_external_id, connected_user_id, connection_id, approval_id, request,
        response, trace_id, policy_id, policy_version, grant_id), 'UTF8'))
      where id = (select id from audit_events where environment_id = ${tamperedId}
        order by seq desc limit 1)
      returning id`;
    const before = await checkpointRows(tamperedId);
    const result = await cli(['repair', '--env', 'tampered'], withKey);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('environment tampered: not repaired');
    expect(result.stderr).toContain(`event ${edited?.id ?? ''}: its hash is not the one sealed`);
    expect(await checkpointRows(tamperedId)).toEqual(before);
    const [repairs] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from audit_repairs where environment_id = ${tamperedId}`;
    expect(repairs?.count).toBe(0);
  });

  it('a fork can no longer be stored: the database refuses a checkpoint off the chain', async () => {
    await addEvents(healthyId, 3);
    const [first] = await db.sql<{ lastSeq: string; hash: Buffer }[]>`
      select last_seq, hash from audit_checkpoints where environment_id = ${healthyId}
      order by last_seq limit 1`;
    const [clock] = await db.sql<{ now: Date }[]>`select now()`;
    const [newest] = await db.sql<{ seq: string }[]>`
      select max(seq) as seq from audit_events where environment_id = ${healthyId}`;
    // Chained to the first checkpoint rather than the newest, as the text ordering did.
    const fork = await checkpointOver(
      db.sql,
      signingKey,
      healthyId,
      first ?? null,
      newest?.seq ?? '0',
      clock?.now ?? new Date(),
    );
    if (!fork) throw new Error('no events to fork with');
    await expect(insertCheckpoint(db.sql, fork)).rejects.toThrow(
      /does not follow the newest checkpoint/,
    );
  });

  it('needs the signing key', async () => {
    const result = await cli(['repair', '--env', 'forked']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('AUDIT_SIGNING_KEY');
  });

  it('does not let a superseded mark without a signed repair take a checkpoint off the chain', async () => {
    const [repair] = await db.sql<{ id: string }[]>`
      select id from audit_repairs where environment_id = ${forked.environmentId}`;
    const [target] = await db.sql<{ id: string }[]>`
      update audit_checkpoints set superseded_by = ${repair?.id ?? ''}, superseded_at = now()
      where id = (select id from audit_checkpoints where environment_id = ${healthyId}
        order by last_seq desc limit 1)
      returning id`;
    const result = await cli(['verify', '--env', 'healthy']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `checkpoint ${target?.id ?? ''}: marked superseded, but no repair signed by a trusted key names it`,
    );
  });
});
