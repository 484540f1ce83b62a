// `gatehouse notifications …`: channels, routes and opt-outs from the command line, against a real
// Postgres; the real binary where what matters is the command line itself (secrets from a file,
// never an argument; the key the worker opens them with), the commands' functions elsewhere.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { openNotificationChannels } from '../../activities/db/notification-channels.js';
import { teamsWebhookUrl } from '../../activities/db/notification-routes.js';
import { notificationTargets } from '../../activities/notifications/notification-targets.js';
import type { NotificationSettings } from '../../activities/notifications/changes.js';
import {
  listChannelsCommand,
  listRoutesCommand,
  optOutCommand,
  parseAudience,
  parseKind,
  parseOptOutKind,
  readSecret,
  removeChannelCommand,
  setEmailChannelCommand,
  setRoutesCommand,
  setSlackChannelCommand,
  setTeamsChannelCommand,
} from '../../infra/cli/notifications.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

/** As in keys.test.ts: a run of the real binary takes 3 to 9 s on this machine. */
const CLI_RUN_BUDGET_MS = 45_000;

const PASSWORD = 'cli-relay-password-7f3a';
const BOT_TOKEN = 'xoxb-77-88-clibottoken';
const SIGNING_SECRET = 'c4ca4238a0b923820dcc509a6f75849b';
const TEAMS_URL = 'https://prod-9.westeurope.logic.azure.com/workflows/q?sig=CliTeamsSignature';

let db: TestDatabase;
let folder: string;
let environmentId: string;
const encryptionKey = randomBytes(32).toString('base64');
let settings: NotificationSettings;
let env: Record<string, string>;
const options = { env: 'cli-notify' };

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  folder = await mkdtemp(path.join(tmpdir(), 'gatehouse-notify-'));
  started.push(() => rm(folder, { recursive: true, force: true }));
  environmentId = (await ensureEnvironment(db.sql, 'cli-notify')).id;
  const config = testConfig(db.url, {
    ENCRYPTION_KEY: encryptionKey,
    NOTIFY_ALLOW_PRIVATE: 'true',
  });
  settings = { keyring: config.encryption, allowPrivate: true };
  env = { DATABASE_URL: db.url, ENCRYPTION_KEY: encryptionKey, NOTIFY_ALLOW_PRIVATE: 'true' };
});

async function secretFile(name: string, text: string): Promise<string> {
  const file = path.join(folder, name);
  await writeFile(file, text, { mode: 0o600 });
  return file;
}

async function cliChanges() {
  return db.sql<{ action: string; agentId: string; request: Record<string, unknown> }[]>`
    select action, agent_id, request from audit_events
    where environment_id = ${environmentId} and action like 'notifications.%'
    order by seq`;
}

describe('gatehouse notifications channels', () => {
  it(
    'sets a relay with its password from a file, sealed with the key the worker has, and never takes one as an argument',
    async () => {
      const file = await secretFile('password', `${PASSWORD}\n`);
      const set = await runCli(
        [
          'notifications',
          'channels',
          'set',
          'email',
          '--env',
          'cli-notify',
          '--host',
          '127.0.0.1',
          '--port',
          '2525',
          '--security',
          'none',
          '--username',
          'relay',
          '--password-file',
          file,
          '--from',
          'approvals@example.com',
          '--from-name',
          'Gatehouse approvals',
        ],
        env,
      );
      expect(set).toEqual({
        code: 0,
        stderr: '',
        stdout:
          'E-mail channel of cli-notify set: 127.0.0.1:2525 (none), from Gatehouse approvals <approvals@example.com>, user relay, password set\n',
      });
      const opened = await openNotificationChannels(db.sql, settings.keyring, environmentId);
      expect(opened.email).toMatchObject({ password: PASSWORD, keyAgentId: null });

      // A secret as an argument is no option at all.
      const inline = await runCli(
        [
          'notifications',
          'channels',
          'set',
          'email',
          '--host',
          '127.0.0.1',
          '--from',
          'a@example.com',
          '--password',
          PASSWORD,
        ],
        env,
      );
      expect(inline.code).toBe(1);
      expect(inline.stderr).toMatch(/unknown option '--password'/);

      // Refused where the API refuses, with NOTIFY_ALLOW_PRIVATE unset as in production.
      const production = { ...env };
      delete production.NOTIFY_ALLOW_PRIVATE;
      const refused = await runCli(
        [
          'notifications',
          'channels',
          'set',
          'email',
          '--env',
          'cli-notify',
          '--host',
          '10.0.0.9',
          '--security',
          'starttls',
          '--from',
          'a@example.com',
        ],
        production,
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        'gatehouse: --host must not point at a loopback, private or link-local address (NOTIFY_ALLOW_PRIVATE=true allows it)\n',
      );
      const listed = await runCli(
        ['notifications', 'channels', 'list', '--env', 'cli-notify'],
        env,
      );
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('127.0.0.1:2525 (none)');
      for (const run of [set, inline, refused, listed]) {
        expect(run.stdout + run.stderr).not.toContain(PASSWORD);
      }
    },
    CLI_RUN_BUDGET_MS * 4,
  );

  it('reads a secret from standard input or a file: one line, its line ending dropped', async () => {
    await expect(
      readSecret('-', '--password-file', Readable.from(['s3cr', 'et\r\n'])),
    ).resolves.toBe('s3cret');
    await expect(readSecret('-', '--password-file', Readable.from(['']))).rejects.toThrow(
      '--password-file standard input is empty',
    );
    await expect(
      readSecret(await secretFile('two-lines', 'a\nb\n'), '--bot-token-file'),
    ).rejects.toThrow('--bot-token-file: the secret must be one line');
    await expect(readSecret(path.join(folder, 'missing'), '--password-file')).rejects.toThrow(
      /--password-file .*missing: ENOENT/,
    );
  });

  it('keeps a stored secret while it would go where it went, and asks for it again otherwise', async () => {
    const relay = {
      ...options,
      host: '127.0.0.1',
      port: '2525',
      security: 'none',
      username: 'relay',
      from: 'approvals@example.com',
    };
    expect(await setEmailChannelCommand(db.sql, settings, { ...relay, port: '2526' })).toContain(
      'password set',
    );
    await expect(
      setEmailChannelCommand(db.sql, settings, { ...relay, host: '127.0.0.2' }),
    ).rejects.toThrow('--password-file give the password again: the host changed');
    await expect(
      setEmailChannelCommand(db.sql, settings, { ...relay, security: 'ssl' }),
    ).rejects.toThrow(/^--security /);
    await expect(
      setEmailChannelCommand(db.sql, settings, {
        ...options,
        host: '127.0.0.1',
        from: 'a@example.com',
        passwordFile: await secretFile('p', 'x'),
      }),
    ).rejects.toThrow('--password-file needs --username');

    await expect(setSlackChannelCommand(db.sql, settings, options)).rejects.toThrow(
      '--bot-token-file is required: none is stored',
    );
    await expect(
      setSlackChannelCommand(db.sql, settings, {
        ...options,
        botTokenFile: '-',
        signingSecretFile: '-',
      }),
    ).rejects.toThrow(/only one of/);
    expect(
      await setSlackChannelCommand(db.sql, settings, {
        ...options,
        botTokenFile: await secretFile('bot', BOT_TOKEN),
        signingSecretFile: await secretFile('signing', SIGNING_SECRET),
      }),
    ).toBe(
      'Slack channel of cli-notify set: bot token set, signing secret set, API https://slack.com/api/',
    );
    expect(await setTeamsChannelCommand(db.sql, settings, options)).toContain('Teams channel');
    const table = await listChannelsCommand(db.sql, options);
    expect(table.split('\n').map((line) => line.split(/\s{2,}/)[0])).toEqual([
      'KIND',
      'email',
      'slack',
      'teams',
    ]);
    const json = JSON.parse(await listChannelsCommand(db.sql, { ...options, json: true })) as {
      kind: string;
    }[];
    expect(json.map((channel) => channel.kind)).toEqual(['email', 'slack', 'teams']);
    expect(JSON.stringify(json)).not.toMatch(/clibottoken|c4ca4238|cli-relay-password/);

    expect(await removeChannelCommand(db.sql, 'teams', options)).toMatch(
      /^removed the Microsoft Teams channel/,
    );
    await expect(removeChannelCommand(db.sql, 'teams', options)).rejects.toThrow(
      'no teams channel in environment "cli-notify"',
    );
    await setTeamsChannelCommand(db.sql, settings, options);
  });
});

describe('gatehouse notifications routes and opt-out', () => {
  it('reads audiences, kinds and targets as typed', () => {
    expect(parseAudience('group:Finance Approvers')).toBe('group:Finance Approvers');
    expect(parseAudience('person:Ada@Example.com')).toBe('person:ada@example.com');
    expect(parseAudience('*')).toBe('*');
    expect(() => parseAudience('finance')).toThrow(InvalidArgumentError);
    expect(() => parseKind('sms')).toThrow('must be one of email, slack, teams.');
    expect(() => parseOptOutKind('teams')).toThrow(/shared channels only/);
  });

  it('sets, lists and removes routes, a Teams webhook from a file and shown by its host', async () => {
    expect(
      await setRoutesCommand(
        db.sql,
        settings,
        'group:finance',
        'email',
        ['each_person', 'finance@example.com'],
        options,
      ),
    ).toBe('group:finance is told through E-mail in cli-notify: each person, finance@example.com');
    await setRoutesCommand(db.sql, settings, '*', 'slack', ['each_person,C0APPROVAL'], options);
    expect(
      await setRoutesCommand(db.sql, settings, 'group:finance', 'teams', [], {
        ...options,
        webhookUrlFile: await secretFile('teams', `${TEAMS_URL}\n`),
      }),
    ).toBe(
      'group:finance is told through Microsoft Teams in cli-notify: webhook at prod-9.westeurope.logic.azure.com',
    );
    const table = await listRoutesCommand(db.sql, options);
    expect(table.split('\n')).toEqual([
      'AUDIENCE       KIND   TARGETS',
      '*              slack  each person, channel C0APPROVAL',
      'group:finance  email  each person, finance@example.com',
      'group:finance  teams  webhook at prod-9.westeurope.logic.azure.com',
    ]);
    expect(table).not.toContain('CliTeamsSignature');
    // What the senders read: the webhook opens with the key the API and worker have.
    const targets = await notificationTargets(db.sql, environmentId, {
      id: 'a1',
      requested_from: ['group:finance'],
    });
    const teams = targets.find((target) => target.channel === 'teams');
    expect(
      await teamsWebhookUrl(
        db.sql,
        settings.keyring,
        environmentId,
        teams?.to.teamsWebhookRef ?? '',
      ),
    ).toBe(TEAMS_URL);

    // Refusals name the word or the flag at fault.
    await expect(
      setRoutesCommand(db.sql, settings, 'group:finance', 'email', ['nobody'], options),
    ).rejects.toThrow(/^targets\.0\.address /);
    await expect(
      setRoutesCommand(db.sql, settings, 'group:finance', 'slack', ['#general'], options),
    ).rejects.toThrow(/^targets\.0\.slack_channel must be a Slack channel id/);
    await expect(
      setRoutesCommand(db.sql, settings, 'group:finance', 'teams', [TEAMS_URL], options),
    ).rejects.toThrow('Teams routes take --webhook-url-file');
    await expect(
      setRoutesCommand(db.sql, { ...settings, allowPrivate: false }, 'group:finance', 'teams', [], {
        ...options,
        webhookUrlFile: await secretFile('local', 'https://127.0.0.1/hook'),
      }),
    ).rejects.toThrow(/^--webhook-url-file must not point at a loopback/);
    await expect(
      setRoutesCommand(db.sql, settings, 'group:finance', 'email', [], options),
    ).rejects.toThrow(/name the targets/);

    expect(await setRoutesCommand(db.sql, settings, '*', 'slack', ['none'], options)).toBe(
      '* is told through Slack in cli-notify: nothing',
    );
    expect(await listRoutesCommand(db.sql, options)).not.toContain('C0APPROVAL');
  });

  it('opts a person out and back in', async () => {
    expect(await optOutCommand(db.sql, 'Bob@Example.com', 'email', options)).toBe(
      'bob@example.com is not told through E-mail in cli-notify now',
    );
    expect(await optOutCommand(db.sql, 'bob@example.com', 'email', options)).toBe(
      'bob@example.com had already opted out of E-mail in cli-notify',
    );
    expect(
      await optOutCommand(db.sql, 'bob@example.com', 'email', { ...options, undo: true }),
    ).toBe('bob@example.com is told through E-mail in cli-notify again');
    await expect(
      optOutCommand(db.sql, 'bob@example.com', 'email', { ...options, undo: true }),
    ).rejects.toThrow('bob@example.com had not opted out of E-mail in "cli-notify"');
    await expect(optOutCommand(db.sql, 'bob', 'email', options)).rejects.toThrow(/^email /);
  });

  it('records every change as the command line’s, without secrets', async () => {
    const changes = await cliChanges();
    expect(changes.length).toBeGreaterThan(8);
    for (const change of changes) {
      expect(change).toMatchObject({ agentId: 'cli', request: { channel: 'cli' } });
      expect(change.request.key).toBeUndefined();
      expect(JSON.stringify(change.request)).not.toMatch(
        /cli-relay-password|clibottoken|c4ca4238|CliTeamsSignature/,
      );
    }
  });
});
