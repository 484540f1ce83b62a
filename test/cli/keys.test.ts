import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { findCallerByKey } from '../../activities/db/api-keys.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer } from '../support/keys.js';

let db: TestDatabase;
let api: TestApi;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig(db.url), db.sql);
  env = { DATABASE_URL: db.url };
});

afterAll(async () => {
  await api.close();
  await db.drop();
});

const status = async (key: string) =>
  (await fetch(`${api.url}/v1/funded-access`, { headers: bearer(key) })).status;

describe('gatehouse envs', () => {
  it('creates an environment once, and refuses a duplicate or a bad name', async () => {
    const created = await runCli(['envs', 'create', 'staging'], env);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/^created environment staging \(/);
    const again = await runCli(['envs', 'create', 'staging'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('gatehouse: environment "staging" already exists\n');
    const bad = await runCli(['envs', 'create', 'Bad_Name'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/names start with a-z/);
    expect((await runCli(['envs', 'list'], env)).stdout).toMatch(/^staging\t/m);
  });
});

describe('gatehouse keys', () => {
  it('creates a key that works, lists it without its secret, and revokes it', async () => {
    await runCli(['envs', 'create', 'lifecycle'], env);
    const created = await runCli(
      [
        'keys',
        'create',
        '--env',
        'lifecycle',
        '--access',
        'standard',
        '--name',
        'ci',
        '--agent',
        'billing-bot',
        '--audience',
        'business',
      ],
      env,
    );
    expect(created.code).toBe(0);
    const key = created.stdout.split('\n')[0] ?? '';
    expect(key).toMatch(/^gk_lifecycle_[A-Za-z0-9_-]{32}$/);
    const id = /^id\s+(\S+)$/m.exec(created.stdout)?.[1] ?? '';
    expect(created.stdout).toMatch(/shown only once/);

    const caller = await findCallerByKey(db.sql, key);
    expect(caller).toMatchObject({
      keyId: id,
      environmentName: 'lifecycle',
      access: 'standard',
      agentId: 'billing-bot',
      audience: 'business',
      scopes: [
        'funded_access:read',
        'auth_configs:read',
        'approvals:read',
        'connect_settings:read',
        'policies:read',
      ],
    });
    expect(await status(key)).toBe(200);

    const listed = await runCli(['keys', 'list', '--env', 'lifecycle'], env);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain(key.slice(0, 17));
    expect(listed.stdout).not.toContain(key);

    const revoked = await runCli(['keys', 'revoke', id], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked key ${id}\n` });
    expect(await status(key)).toBe(401);
    expect((await runCli(['keys', 'list', '--env', 'lifecycle'], env)).stdout).toMatch(
      /\trevoked$/m,
    );

    const twice = await runCli(['keys', 'revoke', id], env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`no active key with id ${id}`);
  });

  it('creates a key with explicit scopes', async () => {
    await runCli(['envs', 'create', 'scoped'], env);
    const created = await runCli(
      [
        'keys',
        'create',
        '--env',
        'scoped',
        '--access',
        'full',
        '--scopes',
        'funded_access:read,approvals:decide',
      ],
      env,
    );
    const caller = await findCallerByKey(db.sql, created.stdout.split('\n')[0] ?? '');
    expect(caller?.scopes).toEqual(['funded_access:read', 'approvals:decide']);
    expect(caller?.agentId).toBe('full key');
  });

  it.each([
    [['keys', 'create', '--env', 'nowhere', '--access', 'full'], /no environment "nowhere"/],
    [
      ['keys', 'create', '--env', 'scoped', '--access', 'admin'],
      /access must be one of read_only, standard, full/,
    ],
    [
      ['keys', 'create', '--env', 'scoped', '--access', 'full', '--scopes', 'everything'],
      /scope "everything" must be one of/,
    ],
    [['keys', 'create', '--env', 'scoped'], /required option '--access <level>'/],
    [['keys', 'revoke', 'not-a-uuid'], /no active key with id not-a-uuid/],
  ])('refuses %j with a clear message', async (args, message) => {
    const result = await runCli(args, env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('process start-up', () => {
  it('stops with a message naming a missing setting', async () => {
    const result = await runCli(['api'], { DATABASE_URL: db.url, API_PORT: 'x' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ENCRYPTION_KEY: is required');
    expect(result.stderr).toContain('API_PORT');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
