import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { findCallerByKey } from '../../activities/db/api-keys.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import {
  createEnvironmentCommand,
  createKeyCommand,
  listEnvironmentsCommand,
  listKeysCommand,
  parseAccess,
  parseEnvironmentName,
  parseOwner,
  parseScopes,
  revokeKeyCommand,
} from '../../infra/cli/keys.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { answeredWithinKeyBound } from '../support/key-change.js';
import { bearer } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The commands run in-process against the test's database: they are what `gatehouse envs` and
 * `gatehouse keys` run. A few tests run the real binary, for what only a process shows (argument
 * parsing, output, exit code, no stack trace). Each run starts Node and tsx and connects to
 * Postgres: about 3 s on an idle 2-core machine, up to 9 s seen while other suites run, so these
 * tests get five times that per run rather than a budget that holds only on an idle machine.
 */
const CLI_RUN_BUDGET_MS = 45_000;

let db: TestDatabase;
let api: TestApi;
let env: Record<string, string>;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  env = { DATABASE_URL: db.url };
});

const status = async (key: string) =>
  (await fetch(`${api.url}/v1/funded-access`, { headers: bearer(key) })).status;

describe('gatehouse envs', () => {
  it('creates an environment once, and refuses a duplicate or a bad name', async () => {
    expect(await createEnvironmentCommand(db.sql, 'staging')).toMatch(
      /^created environment staging \(/,
    );
    await expect(createEnvironmentCommand(db.sql, 'staging')).rejects.toThrow(
      'environment "staging" already exists',
    );
    expect(() => parseEnvironmentName('Bad_Name')).toThrow(InvalidArgumentError);
    expect(() => parseEnvironmentName('Bad_Name')).toThrow(/names start with a-z/);
    const table = await listEnvironmentsCommand(db.sql);
    expect(table.split('\n')[0]).toMatch(/^NAME +ID +CREATED$/);
    expect(table).toMatch(/^staging +[0-9a-f-]{36} +\d{4}-/m);
    const listed = JSON.parse(await listEnvironmentsCommand(db.sql, { json: true })) as {
      name: string;
    }[];
    expect(listed.map((e) => e.name)).toContain('staging');
  });
});

describe('gatehouse keys', () => {
  it('creates a key that works, lists it without its secret, and revokes it', async () => {
    await ensureEnvironment(db.sql, 'lifecycle');
    const created = await createKeyCommand(db.sql, {
      env: 'lifecycle',
      access: 'standard',
      name: 'ci',
      agent: 'billing-bot',
      audience: 'business',
    });
    const key = created.split('\n')[0] ?? '';
    expect(key).toMatch(/^gk_lifecycle_[A-Za-z0-9_-]{32}$/);
    const id = /^id\s+(\S+)$/m.exec(created)?.[1] ?? '';
    expect(created).toMatch(/shown only once/);

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
        'apps:read',
      ],
    });
    expect(await status(key)).toBe(200);

    const listed = await listKeysCommand(db.sql, 'lifecycle');
    expect(listed).toContain(id);
    expect(listed).toContain(key.slice(0, 17));
    expect(listed).not.toContain(key);

    expect(await revokeKeyCommand(db.sql, id)).toBe(`revoked key ${id}`);
    // Within the API key cache's bound (2 s).
    await answeredWithinKeyBound(() => status(key), 401, Date.now());
    const table = await listKeysCommand(db.sql, 'lifecycle');
    expect(table.split('\n')[0]).toMatch(
      /^ID +PREFIX +NAME +ACCESS +AGENT +OWNER +AUDIENCE +STATUS$/,
    );
    expect(table).toMatch(new RegExp(`^${id} .* revoked$`, 'm'));
    const json = JSON.parse(await listKeysCommand(db.sql, 'lifecycle', { json: true })) as {
      id: string;
      status: string;
      scopes: string[];
    }[];
    expect(json.find((k) => k.id === id)).toMatchObject({ status: 'revoked' });
    expect(JSON.stringify(json)).not.toContain(key);
    await expect(revokeKeyCommand(db.sql, id)).rejects.toThrow(`no active key with id ${id}`);
  });

  it('creates a key with explicit scopes', async () => {
    await ensureEnvironment(db.sql, 'scoped');
    const created = await createKeyCommand(db.sql, {
      env: 'scoped',
      access: 'full',
      scopes: parseScopes('funded_access:read, approvals:decide'),
    });
    const caller = await findCallerByKey(db.sql, created.split('\n')[0] ?? '');
    expect(caller?.scopes).toEqual(['funded_access:read', 'approvals:decide']);
    expect(caller?.agentId).toBe('full key');
  });

  it('records who owns a key, as a lower-case email, and lists it', async () => {
    await ensureEnvironment(db.sql, 'owned');
    const created = await createKeyCommand(db.sql, {
      env: 'owned',
      access: 'standard',
      name: 'billing',
      owner: parseOwner(' Alice.Smith@Example.COM '),
    });
    expect(created).toMatch(/^owner +alice\.smith@example\.com$/m);
    const id = /^id\s+(\S+)$/m.exec(created)?.[1] ?? '';
    const [stored] = await db.sql<{ owner: string | null }[]>`
      select owner from api_keys where id = ${id}`;
    expect(stored?.owner).toBe('alice.smith@example.com');
    const unowned = await createKeyCommand(db.sql, { env: 'owned', access: 'full' });
    expect(unowned).toMatch(/^owner +\(none\)$/m);

    const table = await listKeysCommand(db.sql, 'owned');
    expect(table).toMatch(
      new RegExp(
        `^${id} .* billing +standard +billing +alice\\.smith@example\\.com +backend +active$`,
        'm',
      ),
    );
    expect(table).toMatch(/ full key +- +backend +active$/m);
    const json = JSON.parse(await listKeysCommand(db.sql, 'owned', { json: true })) as {
      id: string;
      owner: string | null;
    }[];
    expect(json.map((k) => k.owner)).toEqual(['alice.smith@example.com', null]);

    for (const bad of ['alice', 'alice@', '@example.com', 'alice @example.com', 'a@b', '']) {
      expect(() => parseOwner(bad)).toThrow(InvalidArgumentError);
      expect(() => parseOwner(bad)).toThrow(/owner must be an email address/);
    }
    expect(() => parseOwner(`${'a'.repeat(250)}@example.com`)).toThrow(/owner must be an email/);
  });

  it('refuses bad arguments with a clear message', async () => {
    await expect(createKeyCommand(db.sql, { env: 'nowhere', access: 'full' })).rejects.toThrow(
      /no environment "nowhere"/,
    );
    expect(() => parseAccess('admin')).toThrow(/access must be one of read_only, standard, full/);
    expect(() => parseScopes('everything')).toThrow(/scope "everything" must be one of/);
    await expect(revokeKeyCommand(db.sql, 'not-a-uuid')).rejects.toThrow(
      /no active key with id not-a-uuid/,
    );
  });
});

describe('the gatehouse binary', () => {
  it(
    'creates a key with its owner: printed once, exit 0, and it works',
    async () => {
      await ensureEnvironment(db.sql, 'binary');
      const created = await runCli(
        [
          'keys',
          'create',
          '--env',
          'binary',
          '--access',
          'read_only',
          '--name',
          'cli',
          '--owner',
          'Ops@Example.com',
        ],
        env,
      );
      expect(created).toMatchObject({ code: 0, stderr: '' });
      expect(created.stdout).toMatch(/^owner +ops@example\.com$/m);
      const key = created.stdout.split('\n')[0] ?? '';
      expect(key).toMatch(/^gk_binary_[A-Za-z0-9_-]{32}$/);
      expect(created.stdout).toMatch(/shown only once/);
      expect(await status(key)).toBe(200);
    },
    CLI_RUN_BUDGET_MS,
  );

  it(
    'refuses bad arguments and failed commands with a message and exit 1, never a stack trace',
    async () => {
      await ensureEnvironment(db.sql, 'binary');
      const badOption = await runCli(
        ['keys', 'create', '--env', 'binary', '--access', 'admin'],
        env,
      );
      expect(badOption.code).toBe(1);
      expect(badOption.stderr).toMatch(/access must be one of read_only, standard, full/);
      const badOwner = await runCli(
        ['keys', 'create', '--env', 'binary', '--access', 'standard', '--owner', 'alice'],
        env,
      );
      expect(badOwner.code).toBe(1);
      expect(badOwner.stderr).toMatch(/owner must be an email address/);
      const failed = await runCli(['envs', 'create', 'binary'], env);
      expect(failed).toMatchObject({
        code: 1,
        stderr: 'gatehouse: environment "binary" already exists\n',
      });
      for (const result of [badOption, badOwner, failed])
        expect(result.stderr).not.toMatch(/\n\s+at /);
      const version = await runCli(['--version'], env);
      const manifest = JSON.parse(
        readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
      ) as { version: string };
      expect(version).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
    },
    4 * CLI_RUN_BUDGET_MS,
  );
});

describe('process start-up', () => {
  it(
    'stops with a message naming a missing setting',
    async () => {
      const result = await runCli(['api'], { DATABASE_URL: db.url, API_PORT: 'x' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('ENCRYPTION_KEY: is required');
      expect(result.stderr).toContain('API_PORT');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
    CLI_RUN_BUDGET_MS,
  );
});
