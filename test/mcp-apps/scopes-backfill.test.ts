// Migration 018 gives keys made before `apps:read` and `apps:manage` existed what their level
// gets now: the back-fill statements, read from the migration itself, run again on keys
// as they were before it.
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Scope } from '../../activities/db/api-keys.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const MIGRATION = new URL('../../infra/migrations/018.do.remote-mcp-apps.sql', import.meta.url);

let db: TestDatabase;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
});

/** The scopes of each level before migration 018. */
const BEFORE = {
  read_only: [
    'funded_access:read',
    'auth_configs:read',
    'approvals:read',
    'connect_settings:read',
    'policies:read',
  ],
  standard: [
    'funded_access:read',
    'auth_configs:read',
    'approvals:read',
    'connect_settings:read',
    'policies:read',
  ],
  full: [
    'funded_access:read',
    'funded_access:manage',
    'auth_configs:read',
    'auth_configs:manage',
    'approvals:read',
    'approvals:decide',
    'connect_settings:read',
    'connect_settings:manage',
    'policies:read',
    'policies:manage',
    'mcp_sessions:manage',
  ],
} satisfies Record<string, Scope[]>;

describe('migration 018', () => {
  it('gives apps:read to every key that could read the catalog, and apps:manage to full keys', async () => {
    const keys = {
      readOnly: await createTestKey(db.sql, {
        env: 'old',
        access: 'read_only',
        scopes: BEFORE.read_only,
      }),
      standard: await createTestKey(db.sql, {
        env: 'old',
        access: 'standard',
        scopes: BEFORE.standard,
      }),
      full: await createTestKey(db.sql, { env: 'old', access: 'full', scopes: BEFORE.full }),
      // A dashboard key granted by hand, without auth_configs:read: left as it was granted.
      decider: await createTestKey(db.sql, {
        env: 'old',
        access: 'standard',
        scopes: ['approvals:read', 'approvals:decide'],
      }),
    };
    const sql = await readFile(MIGRATION, 'utf8');
    const backfill = sql.slice(sql.indexOf('update api_keys'));
    expect(backfill).toContain("'apps:manage'");
    await db.sql.unsafe(backfill);
    // Twice changes nothing more.
    await db.sql.unsafe(backfill);

    const scopesOf = async (id: string) => {
      const [row] = await db.sql<
        { scopes: string[] }[]
      >`select scopes from api_keys where id = ${id}`;
      return row?.scopes ?? [];
    };
    expect(await scopesOf(keys.readOnly.id)).toEqual([...BEFORE.read_only, 'apps:read']);
    expect(await scopesOf(keys.standard.id)).toEqual([...BEFORE.standard, 'apps:read']);
    expect(await scopesOf(keys.full.id)).toEqual([...BEFORE.full, 'apps:read', 'apps:manage']);
    expect(await scopesOf(keys.decider.id)).toEqual(['approvals:read', 'approvals:decide']);
  });
});
