// Migration 020 gives full keys made before `grants:read` and `grants:manage` existed both
// scopes, and standard and read-only keys neither: the back-fill statements, read
// from the migration itself, run again on keys as they were before it.
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { MANAGEMENT_SCOPES, type Scope } from '../../activities/db/api-keys.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const MIGRATION = new URL('../../infra/migrations/020.do.grants.sql', import.meta.url);

let db: TestDatabase;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
});

const beforeGrants = (scopes: readonly Scope[]) => scopes.filter((s) => !s.startsWith('grants:'));
const READS = beforeGrants(MANAGEMENT_SCOPES.filter((s) => s.endsWith(':read')));
const ALL = beforeGrants(MANAGEMENT_SCOPES);

describe('migration 020', () => {
  it('gives grants:read and grants:manage to full keys only, once', async () => {
    const keys = {
      readOnly: await createTestKey(db.sql, { env: 'old', access: 'read_only', scopes: READS }),
      standard: await createTestKey(db.sql, { env: 'old', access: 'standard', scopes: READS }),
      full: await createTestKey(db.sql, { env: 'old', access: 'full', scopes: ALL }),
    };
    const sql = await readFile(MIGRATION, 'utf8');
    const backfill = sql.slice(sql.indexOf('update api_keys'));
    expect(backfill).toContain("'grants:manage'");
    await db.sql.unsafe(backfill);
    await db.sql.unsafe(backfill);

    const scopesOf = async (id: string) => {
      const [row] = await db.sql<{ scopes: string[] }[]>`
        select scopes from api_keys where id = ${id}`;
      return row?.scopes ?? [];
    };
    expect(await scopesOf(keys.readOnly.id)).toEqual(READS);
    expect(await scopesOf(keys.standard.id)).toEqual(READS);
    expect(await scopesOf(keys.full.id)).toEqual([...ALL, 'grants:read', 'grants:manage']);
  });
});
