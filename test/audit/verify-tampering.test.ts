import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { registerSigningKey } from '../../activities/db/audit-checkpoints.js';
import { sealEnvironment } from '../../activities/audit/seal-audit.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { runCli } from '../support/cli.js';
import { newAuditEvent } from '../support/audit-event.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
const signingKey = parseAuditSigningKey(
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  't1',
);

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  await registerSigningKey(db.sql, signingKey);
});

/** An environment with six sealed events (seq gaps between them: another environment wrote in
 * between) and two unsealed ones. */
async function sealedEnvironment(name: string) {
  const { id } = await ensureEnvironment(db.sql, name);
  const { id: other } = await ensureEnvironment(db.sql, `${name}-other`);
  const ids: string[] = [];
  for (let n = 0; n < 6; n += 1) {
    ids.push(...(await insertAuditEvents(db.sql, [newAuditEvent(id, n)])));
    await insertAuditEvents(db.sql, [newAuditEvent(other, n)]);
  }
  const sealed = await sealEnvironment({ sql: db.sql, signingKey, settleSeconds: 0 }, id);
  await insertAuditEvents(db.sql, [newAuditEvent(id, 6), newAuditEvent(id, 7)]);
  return { id, ids, checkpointId: sealed?.id ?? '' };
}

function nth(list: string[], index: number): string {
  const item = list[index];
  if (item === undefined) throw new Error(`no item ${String(index)}`);
  return item;
}

const verify = (...args: string[]) =>
  runCli(['audit', 'verify', ...args], { DATABASE_URL: db.url });

describe('gatehouse audit verify', () => {
  it('passes an untouched trail, sealed and unsealed, with keys from a file', async () => {
    await sealedEnvironment('intact');
    const keys = path.join(tmpdir(), `gatehouse-audit-keys-${String(process.pid)}.json`);
    await writeFile(keys, JSON.stringify({ t1: signingKey.publicKeyPem }));
    const result = await verify('--env', 'intact', '--public-keys', keys);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('audit trail intact: 1 checkpoints, 8 events');
  });

  it('names an event whose field was edited', async () => {
    const { ids } = await sealedEnvironment('edited');
    await db.sql`update audit_events set decision = 'denied' where id = ${nth(ids, 2)}`;
    const result = await verify('--env', 'edited');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`event ${nth(ids, 2)}: its content does not match its hash`);
  });

  it('names an event edited with its hash recomputed, against its checkpoint', async () => {
    const { ids, checkpointId } = await sealedEnvironment('rehashed');
    await db.sql`update audit_events set reason = 'nothing to see', hash = sha256(convert_to(
      audit_event_canonical(id, environment_id, time, action, scope, decision, 'nothing to see',
      agent_id, via, user_external_id, connected_user_id, connection_id, approval_id, request,
      response, trace_id, policy_id, policy_version, grant_id), 'UTF8')) where id = ${nth(ids, 1)}`;
    const result = await verify('--env', 'rehashed');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `event ${nth(ids, 1)}: its hash is not the one sealed in checkpoint ${checkpointId}`,
    );
  });

  it('names a deleted event', async () => {
    const { ids, checkpointId } = await sealedEnvironment('deleted');
    await db.sql`delete from audit_events where id = ${nth(ids, 4)}`;
    const result = await verify('--env', 'deleted');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `event ${nth(ids, 4)}: missing (sealed in checkpoint ${checkpointId})`,
    );
  });

  it('names a row inserted into a sealed range', async () => {
    const { id, ids, checkpointId } = await sealedEnvironment('inserted');
    const [row] = await db.sql<{ seq: string }[]>`
      select seq::text as seq from audit_events where id = ${nth(ids, 3)}`;
    const forged = '0198f2d0-3b7c-7e11-a4c2-9d8e7f6a5b43';
    await db.sql`
      insert into audit_events (id, environment_id, seq, action, scope, decision, agent_id, via,
        user_external_id, request, trace_id)
      values (${forged}, ${id}, ${BigInt(row?.seq ?? '0') - 1n}, 'acme.list_tasks', 'read', 'allowed',
        'agent', 'api', 'u_x', '{}', 'forged')`;
    const result = await verify('--env', 'inserted');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `event ${forged}: inserted into the range sealed by checkpoint ${checkpointId}`,
    );
  });

  it('names a checkpoint re-signed with another key under the same key id', async () => {
    const { checkpointId } = await sealedEnvironment('resigned');
    const forger = generateKeyPairSync('ed25519').privateKey;
    await db.sql`update audit_checkpoints set signature = ${sign(null, Buffer.from('x'), forger)}
      where id = ${checkpointId}`;
    const result = await verify('--env', 'resigned');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `checkpoint ${checkpointId}: its signature does not verify under key "t1"`,
    );
  });

  it('trusts only the keys given: a key id added to the table by a forger is refused', async () => {
    const { checkpointId } = await sealedEnvironment('forged-key');
    const forged = parseAuditSigningKey(
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      'forged',
    );
    await registerSigningKey(db.sql, forged);
    await db.sql`update audit_checkpoints set key_id = 'forged' where id = ${checkpointId}`;
    const keys = path.join(tmpdir(), `gatehouse-audit-keys-${String(process.pid)}-2.json`);
    await writeFile(keys, JSON.stringify({ t1: signingKey.publicKeyPem }));
    const result = await verify('--env', 'forged-key', '--public-keys', keys);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `checkpoint ${checkpointId}: signed with key "forged", which is not a trusted key`,
    );
  });
});
