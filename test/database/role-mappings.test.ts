import { beforeAll, describe, expect, it } from '@jest/globals';
import { ensureEnvironment } from '../../activities/db/environments.js';
import {
  listRoleMappings,
  rolesOfGroups,
  ROLES,
  setGroupRoles,
} from '../../activities/db/role-mappings.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

const started = stopsAfterAll();
let db: TestDatabase;

beforeAll(async () => {
  db = started.add(await createTestDatabase());
});

/** A fresh environment of its own for each test, so none sees another's mappings. */
async function environment(name: string): Promise<string> {
  return (await ensureEnvironment(db.sql, name)).id;
}

describe('role mappings', () => {
  it('lists nothing for an environment nobody mapped, and no roles for any group of it', async () => {
    const env = await environment('unmapped');
    expect(await listRoleMappings(db.sql, env)).toEqual([]);
    expect(await rolesOfGroups(db.sql, env, ['approvers', 'operators'])).toEqual([]);
    expect(await rolesOfGroups(db.sql, env, [])).toEqual([]);
  });

  it("sets a group's roles, replacing what it had, each once and in the order of ROLES", async () => {
    const env = await environment('replaced');
    expect(await setGroupRoles(db.sql, env, 'ops', ['admin', 'operator', 'admin'])).toEqual([
      'operator',
      'admin',
    ]);
    await setGroupRoles(db.sql, env, 'approvers', ['approver']);
    expect(await listRoleMappings(db.sql, env)).toEqual([
      { group: 'approvers', roles: ['approver'] },
      { group: 'ops', roles: ['operator', 'admin'] },
    ]);
    // Replaced, not added to: the roles it no longer lists are gone.
    expect(await setGroupRoles(db.sql, env, 'ops', ['approver'])).toEqual(['approver']);
    expect(await listRoleMappings(db.sql, env)).toEqual([
      { group: 'approvers', roles: ['approver'] },
      { group: 'ops', roles: ['approver'] },
    ]);
    // No roles: the group is no longer mapped at all.
    expect(await setGroupRoles(db.sql, env, 'ops', [])).toEqual([]);
    expect(await listRoleMappings(db.sql, env)).toEqual([
      { group: 'approvers', roles: ['approver'] },
    ]);
  });

  it("gives a person the union of their groups' roles in that environment only", async () => {
    const env = await environment('union');
    const other = await environment('union-other');
    await setGroupRoles(db.sql, env, 'approvers', ['approver']);
    await setGroupRoles(db.sql, env, 'finance', ['approver']);
    await setGroupRoles(db.sql, env, 'operators', ['admin', 'operator']);
    await setGroupRoles(db.sql, other, 'finance', ['admin']);
    expect(await rolesOfGroups(db.sql, env, ['finance', 'approvers'])).toEqual(['approver']);
    expect(await rolesOfGroups(db.sql, env, ['operators', 'finance'])).toEqual([...ROLES]);
    // A group of the same name elsewhere gives nothing here, and unknown groups give nothing.
    expect(await rolesOfGroups(db.sql, other, ['approvers', 'operators'])).toEqual([]);
    expect(await rolesOfGroups(db.sql, env, ['Approvers', 'approvers '])).toEqual([]);
  });

  it('keeps the last of two changes of one group whole, never a mix of both', async () => {
    const env = await environment('concurrent');
    // Rounds, since two unguarded changes mix only when their statements interleave.
    for (let round = 0; round < 10; round++) {
      await setGroupRoles(db.sql, env, 'ops', ['approver']);
      const changes = await Promise.all([
        setGroupRoles(db.sql, env, 'ops', ['operator', 'admin']),
        setGroupRoles(db.sql, env, 'ops', ['approver']),
        setGroupRoles(db.sql, env, 'ops', ['admin']),
      ]);
      const mappings = await listRoleMappings(db.sql, env);
      expect(mappings).toHaveLength(1);
      expect(changes).toContainEqual(mappings[0]?.roles);
    }
  });

  it('refuses a group name the table refuses, changing nothing', async () => {
    const env = await environment('refused');
    await setGroupRoles(db.sql, env, 'ops', ['operator']);
    await expect(setGroupRoles(db.sql, env, '', ['admin'])).rejects.toThrow(/check constraint/);
    await expect(setGroupRoles(db.sql, env, 'x'.repeat(201), ['admin'])).rejects.toThrow(
      /check constraint/,
    );
    expect(await listRoleMappings(db.sql, env)).toEqual([{ group: 'ops', roles: ['operator'] }]);
  });
});
