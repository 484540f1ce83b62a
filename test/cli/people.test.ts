import { beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { listRoleMappings } from '../../activities/db/role-mappings.js';
import {
  listRoleMappingsCommand,
  parseGroup,
  parseRoles,
  setRoleMappingCommand,
} from '../../infra/cli/people.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

/** As in keys.test.ts: a run of the real binary takes 3 to 9 s on this machine. */
const CLI_RUN_BUDGET_MS = 45_000;

let db: TestDatabase;
let env: Record<string, string>;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  env = { DATABASE_URL: db.url };
});

/** The audit events of role mapping changes in an environment, oldest first. */
async function changesIn(environmentId: string) {
  return db.sql<{ agentId: string; via: string; request: Record<string, unknown> }[]>`
    select agent_id, via, request from audit_events
    where environment_id = ${environmentId} and action = 'people.role_mappings'
    order by seq`;
}

describe('gatehouse people roles', () => {
  it('reads roles as words, comma lists or none, and refuses anything else', () => {
    expect(parseRoles(['approver'])).toEqual(['approver']);
    expect(parseRoles(['admin', 'approver'])).toEqual(['admin', 'approver']);
    expect(parseRoles(['approver,operator', 'admin'])).toEqual(['approver', 'operator', 'admin']);
    expect(parseRoles([' approver , admin '])).toEqual(['approver', 'admin']);
    expect(parseRoles(['none'])).toEqual([]);
    for (const [words, message] of [
      [['root'], /role "root" must be one of approver, operator, admin \(or none\)/],
      [['Approver'], /role "Approver" must be one of/],
      [['none', 'admin'], /none stands alone/],
      [['approver', 'approver'], /must not name a role twice/],
      [[','], /name the roles \(approver, operator, admin\), or none/],
    ] as const) {
      expect(() => parseRoles(words)).toThrow(InvalidArgumentError);
      expect(() => parseRoles(words)).toThrow(message);
    }
    expect(parseGroup('Finance Approvers/EMEA')).toBe('Finance Approvers/EMEA');
    expect(() => parseGroup('')).toThrow(/group must not be empty/);
    expect(() => parseGroup('x'.repeat(201))).toThrow(/group must be at most 200 characters/);
    expect(() => parseGroup('a\nb')).toThrow(/group must not contain control characters/);
    expect(parseGroup('person:Ada@Example.COM')).toBe('person:ada@example.com');
    expect(() => parseGroup('person:ada')).toThrow(
      /group must be person: followed by an email address/,
    );
  });

  it('sets and lists an environment’s mappings, each change audited as the command line’s', async () => {
    const environment = await ensureEnvironment(db.sql, 'cli-people');
    const options = { env: 'cli-people' };
    expect(await listRoleMappingsCommand(db.sql, options)).toBe(
      '(no groups hold a role in cli-people)',
    );
    expect(
      await setRoleMappingCommand(db.sql, 'Finance Approvers', ['admin', 'approver'], options),
    ).toBe('group "Finance Approvers" holds approver, admin in cli-people now');
    expect(await setRoleMappingCommand(db.sql, 'ops', ['operator'], options)).toBe(
      'group "ops" holds operator in cli-people now',
    );
    const table = await listRoleMappingsCommand(db.sql, options);
    expect(table.split('\n')).toEqual([
      'GROUP              ROLES',
      'Finance Approvers  approver,admin',
      'ops                operator',
    ]);
    expect(JSON.parse(await listRoleMappingsCommand(db.sql, { ...options, json: true }))).toEqual([
      { group: 'Finance Approvers', roles: ['approver', 'admin'] },
      { group: 'ops', roles: ['operator'] },
    ]);

    expect(await setRoleMappingCommand(db.sql, 'ops', [], options)).toBe(
      'group "ops" holds no role in cli-people now',
    );
    expect(await listRoleMappings(db.sql, environment.id)).toEqual([
      { group: 'Finance Approvers', roles: ['approver', 'admin'] },
    ]);
    const changes = await changesIn(environment.id);
    expect(changes).toEqual([
      expect.objectContaining({
        agentId: 'cli',
        via: 'operator',
        request: expect.objectContaining({
          channel: 'cli',
          group: 'Finance Approvers',
          roles: ['approver', 'admin'],
        }) as unknown,
      }),
      expect.objectContaining({ request: expect.objectContaining({ group: 'ops' }) as unknown }),
      expect.objectContaining({
        request: expect.objectContaining({ group: 'ops', roles: [] }) as unknown,
      }),
    ]);
    await expect(listRoleMappingsCommand(db.sql, { env: 'nowhere' })).rejects.toThrow(
      'no environment "nowhere"',
    );
    await expect(
      setRoleMappingCommand(db.sql, 'ops', ['admin'], { env: 'nowhere' }),
    ).rejects.toThrow('no environment "nowhere"');
  });

  it(
    'the binary: sets with words or a comma list, lists as JSON, refuses a bad role with exit 1',
    async () => {
      const environment = await ensureEnvironment(db.sql, 'cli-people-bin');
      const at = ['--env', 'cli-people-bin'];
      const set = await runCli(
        ['people', 'roles', 'set', 'Okta Approvers/EU', 'approver,admin', 'operator', ...at],
        env,
      );
      expect(set).toMatchObject({
        code: 0,
        stderr: '',
        stdout: 'group "Okta Approvers/EU" holds approver, operator, admin in cli-people-bin now\n',
      });
      const bad = await runCli(['people', 'roles', 'set', 'ops', 'root', ...at], env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/role "root" must be one of approver, operator, admin/);
      expect(bad.stderr).not.toMatch(/\n\s+at /);
      const listed = await runCli(['people', 'roles', 'list', '--json', ...at], env);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([
        { group: 'Okta Approvers/EU', roles: ['approver', 'operator', 'admin'] },
      ]);
      const removed = await runCli(
        ['people', 'roles', 'set', 'Okta Approvers/EU', 'none', ...at],
        env,
      );
      expect(removed).toMatchObject({ code: 0, stderr: '' });
      expect(await listRoleMappings(db.sql, environment.id)).toEqual([]);
    },
    4 * CLI_RUN_BUDGET_MS,
  );
});
