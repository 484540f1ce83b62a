import { beforeAll, describe, expect, it } from '@jest/globals';
import { createAuthConfig } from '../../activities/db/auth-configs.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { listAppsCommand, showAppCommand } from '../../infra/cli/apps.js';
import type { Config } from '../../infra/config.js';
import { listApps } from '../../workflows/catalog/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/** As in keys.test.ts: a run of the real binary takes 3 to 9 s on this machine. */
const CLI_RUN_BUDGET_MS = 45_000;

const PUBLIC_URL = 'https://gatehouse.example.test';
const REDIRECT_URI = `${PUBLIC_URL}/connect/callback`;

let db: TestDatabase;
let api: TestApi;
let config: Config;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url, { PUBLIC_URL });
  api = started.add(await startTestApi(config, db.sql));
});

describe('gatehouse apps list', () => {
  it('lists every catalog app in a table, and the redirect URI to register at each', async () => {
    const table = await listAppsCommand(config);
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^APP +NAME +AUTH +ACTIONS +SCOPES REQUESTED$/);
    for (const app of listApps()) {
      expect(table).toMatch(new RegExp(`^${app.id} +${app.name} +oauth2 +\\d+ +`, 'm'));
    }
    expect(table).toMatch(/^github +GitHub +oauth2 +7 +repo$/m);
    expect(lines.at(-1)).toBe(
      `Redirect URI to register at each app's OAuth client: ${REDIRECT_URI}`,
    );

    const json = JSON.parse(await listAppsCommand(config, { json: true })) as {
      app: string;
      redirect_uri: string;
    }[];
    expect(json.map((app) => app.app)).toEqual(listApps().map((app) => app.id));
    for (const app of json) expect(app.redirect_uri).toBe(REDIRECT_URI);
    // Without --env nothing is read from a database, so nothing is said of auth configs.
    expect(json[0]).not.toHaveProperty('oauth_client');
  });

  it("with --env, says whose OAuth client each app's new connections use", async () => {
    const environment = await ensureEnvironment(db.sql, 'listing');
    const created = await createAuthConfig(db.sql, config.encryption, {
      environmentId: environment.id,
      app: 'github',
      name: 'GitHub OAuth app',
      clientId: 'Iv1.listing',
      clientSecret: 'listing-secret-0123456789',
    });
    const table = await listAppsCommand(config, {}, { sql: db.sql, name: 'listing' });
    expect(table.split('\n')[0]).toMatch(/^APP +NAME +AUTH +ACTIONS +OAUTH CLIENT +SCOPES/);
    expect(table).toMatch(
      new RegExp(`^github +GitHub +oauth2 +7 +auth config ${created.id} +repo$`, 'm'),
    );
    expect(table).toMatch(/^slack +Slack +oauth2 +\d+ +none: create an auth config +/m);
    await expect(listAppsCommand(config, {}, { sql: db.sql, name: 'nowhere' })).rejects.toThrow(
      'no environment "nowhere"',
    );
  });
});

describe('gatehouse apps show', () => {
  it('shows the redirect URI, endpoints, scopes and actions of one app', async () => {
    const text = await showAppCommand(config, 'github');
    expect(text).toMatch(/^app +github$/m);
    expect(text).toMatch(new RegExp(`^redirect URI +${REDIRECT_URI}$`, 'm'));
    expect(text).toMatch(/^authorize URL +https:\/\/github\.com\/login\/oauth\/authorize$/m);
    expect(text).toMatch(/^API base URL +https:\/\/api\.github\.com$/m);
    expect(text).toMatch(/^SCOPE +GRADES +REQUESTED$/m);
    expect(text).toMatch(/^repo +read, write +yes$/m);
    expect(text).toMatch(/^ACTION +SCOPE +DESCRIPTION$/m);
    expect(text).toMatch(/^github\.create_issue +write +Open an issue/m);
    expect(text).not.toMatch(/^oauth client/m);
    await expect(showAppCommand(config, 'nope')).rejects.toThrow(
      `unknown app "nope"; known apps: ${listApps()
        .map((app) => app.id)
        .join(', ')}`,
    );
  });

  it("answers with --env --json exactly what GET /v1/apps/{app} answers that environment's keys", async () => {
    const key = await createTestKey(db.sql, { env: 'same', access: 'standard' });
    await createAuthConfig(db.sql, config.encryption, {
      environmentId: key.environmentId,
      app: 'github',
      name: 'GitHub OAuth app',
      clientId: 'Iv1.same',
      clientSecret: 'same-secret-0123456789',
    });
    const fromApi = (await (
      await fetch(`${api.url}/v1/apps/github`, { headers: bearer(key.key) })
    ).json()) as Record<string, unknown>;
    expect(fromApi).toMatchObject({ redirect_uri: REDIRECT_URI, oauth_client: 'auth_config' });
    const fromCli = JSON.parse(
      await showAppCommand(config, 'github', { json: true }, { sql: db.sql, name: 'same' }),
    ) as unknown;
    expect(fromCli).toEqual(fromApi);
  });
});

describe('the gatehouse binary', () => {
  it(
    'prints the redirect URI of PUBLIC_URL, as the API does, and refuses an unknown app',
    async () => {
      const key = await createTestKey(db.sql, { env: 'binary', access: 'read_only' });
      const env = { DATABASE_URL: db.url, PUBLIC_URL };
      const shown = await runCli(['apps', 'show', 'github', '--env', 'binary', '--json'], env);
      expect(shown).toMatchObject({ code: 0, stderr: '' });
      const fromApi = await fetch(`${api.url}/v1/apps/github`, { headers: bearer(key.key) });
      expect(JSON.parse(shown.stdout)).toEqual(await fromApi.json());

      const listed = await runCli(['apps', 'list'], env);
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(listed.stdout).toContain(
        `Redirect URI to register at each app's OAuth client: ${REDIRECT_URI}\n`,
      );

      const unknown = await runCli(['apps', 'show', 'nope'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^gatehouse: unknown app "nope"; known apps: acme, github/);
      expect(unknown.stderr).not.toMatch(/\n\s+at /);

      // A command's --version is its own (the snapshot accepted), not the program's version.
      const accepted = await runCli(
        ['apps', 'accept', 'nope', '--env', 'binary', '--version', '1'],
        env,
      );
      expect(accepted.stdout).toBe('');
      expect(accepted.code).toBe(1);
      expect(accepted.stderr).toMatch(/^gatehouse: .*nope/);
    },
    3 * CLI_RUN_BUDGET_MS,
  );
});
