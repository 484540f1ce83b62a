import { beforeAll, describe, expect, it } from '@jest/globals';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { listAppsCommand } from '../../infra/cli/apps.js';
import {
  acceptMcpAppCommand,
  refreshMcpAppCommand,
  registerMcpAppCommand,
  removeMcpAppCommand,
  showMcpAppCommand,
  updateMcpAppCommand,
  type McpAppSettings,
} from '../../infra/cli/mcp-apps.js';
import type { Config } from '../../infra/config.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey } from '../support/keys.js';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';
import { startToolsListRewriter, type ToolsListRewriter } from '../support/tools-list-rewriter.js';
import { stopsAfterAll } from '../support/stops.js';

/** As in keys.test.ts: a run of the real binary takes 3 to 9 s on this machine. */
const CLI_RUN_BUDGET_MS = 45_000;

let db: TestDatabase;
let api: TestApi;
let config: Config;
let settings: McpAppSettings;
let everything: McpServerProcess;
let rewriter: ToolsListRewriter;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url);
  settings = { mcpApps: config.mcpApps, upstream: config.upstream };
  [api, everything] = await Promise.all([
    startTestApi(config, db.sql).then(started.add),
    startServerEverything().then(started.add),
  ]);
  rewriter = started.add(await startToolsListRewriter(everything.url));
  await ensureEnvironment(db.sql, 'cli-mcp');
});

describe('gatehouse apps register|refresh|accept|update|remove', () => {
  it('registers server-everything, shows its tools and grades, and pins a changed tool until accepted', async () => {
    const env = { env: 'cli-mcp' };
    const registered = await registerMcpAppCommand(db.sql, settings, 'everything', {
      ...env,
      url: rewriter.url,
      name: 'Everything',
      grade: 'get-env=destructive',
    });
    expect(registered).toMatch(/^auth +none: every user may call its tools$/m);
    // The server's own annotations grade its tools: nothing is callable until they are accepted.
    expect(registered).toMatch(/^snapshots +none accepted, latest v1, checked /m);
    expect(registered).toMatch(
      /^pending +v1 \(added .*\): gatehouse apps accept everything --version 1/m,
    );
    expect(registered).toMatch(/^echo +read \(server's annotations\) +no +tool "echo"/m);
    expect(registered).toMatch(/^get-env +destructive \(override\) +no /m);

    const reviewed = await acceptMcpAppCommand(db.sql, settings, 'everything', {
      ...env,
      version: '1',
    });
    expect(reviewed).toMatch(/^snapshots +accepted v1, latest v1, checked /m);
    expect(reviewed).toMatch(/^echo +read \(server's annotations\) +yes *$/m);
    expect(reviewed).toMatch(/^get-env +destructive \(override\) +yes *$/m);
    expect(reviewed).toMatch(/^toggle-simulated-logging +write \(server's annotations\) +yes *$/m);

    rewriter.rewrite = (tools) =>
      tools.map((tool) =>
        tool.name === 'echo' ? { ...tool, description: 'Echoes loudly' } : tool,
      );
    let refreshed: string;
    try {
      refreshed = await refreshMcpAppCommand(db.sql, settings, 'everything', env);
    } finally {
      rewriter.rewrite = null;
    }
    expect(refreshed).toMatch(
      /^pending +v2 \(changed echo \(description\)\): gatehouse apps accept everything --version 2/m,
    );
    expect(refreshed).toMatch(
      /^echo +read \(server's annotations\) +no +tool "echo" of app "everything" changed its description/m,
    );

    const accepted = await acceptMcpAppCommand(db.sql, settings, 'everything', {
      ...env,
      version: '2',
    });
    expect(accepted).toMatch(/^pending +nothing$/m);
    expect(accepted).toMatch(/^echo +read \(server's annotations\) +yes *$/m);

    const updated = await updateMcpAppCommand(db.sql, settings, 'everything', {
      ...env,
      allow: 'echo,get-sum',
    });
    expect(updated).toMatch(/^allow-list +echo, get-sum$/m);

    // The API shows what the command line registered, and the audit log who did it.
    const key = await createTestKey(db.sql, { env: 'cli-mcp', access: 'full' });
    const shown = await fetch(`${api.url}/v1/mcp-apps/everything`, { headers: bearer(key.key) });
    expect(((await shown.json()) as { data: Record<string, unknown> }).data).toMatchObject({
      app: 'everything',
      tool_allowlist: ['echo', 'get-sum'],
      snapshot: { accepted_version: 2 },
      updated_by: 'cli',
    });
    const audit = (await (
      await fetch(`${api.url}/v1/audit`, { headers: bearer(key.key) })
    ).json()) as { data: { action: string; agent_id: string; via: string }[] };
    expect(audit.data.filter((event) => event.action === 'everything.*')).toHaveLength(5);
    expect(audit.data[0]).toMatchObject({ agent_id: 'cli', via: 'operator' });

    const listed = await listAppsCommand(config, {}, { sql: db.sql, name: 'cli-mcp' });
    expect(listed).toMatch(/^Remote MCP apps of cli-mcp:$/m);
    expect(listed).toMatch(/^everything +Everything +none +2 +none +http:/m);

    expect(await removeMcpAppCommand(db.sql, settings, 'everything', env)).toBe(
      'app everything deleted; 0 connections revoked',
    );
    await expect(showMcpAppCommand(db.sql, 'everything', env)).rejects.toThrow(
      'no app "everything" in environment "cli-mcp"',
    );
  });

  it('refuses what the API refuses, naming the flag', async () => {
    const env = { env: 'cli-mcp' };
    await expect(
      registerMcpAppCommand(db.sql, settings, 'github', { ...env, url: everything.url }),
    ).rejects.toThrow("catalog app's id");
    await expect(
      registerMcpAppCommand(db.sql, settings, 'Bad_Id', { ...env, url: everything.url }),
    ).rejects.toThrow('<app>: must be');
    await expect(
      registerMcpAppCommand(db.sql, settings, 'plain', { ...env, url: 'http://example.com/mcp' }),
    ).rejects.toThrow('must be an https URL');
    await expect(
      registerMcpAppCommand(db.sql, settings, 'graded', {
        ...env,
        url: everything.url,
        grade: 'echo=admin',
      }),
    ).rejects.toThrow('--grade');
    await expect(
      registerMcpAppCommand(db.sql, settings, 'proto', {
        ...env,
        url: everything.url,
        grade: '__proto__=read',
      }),
    ).rejects.toThrow('__proto__');
    await expect(
      registerMcpAppCommand(db.sql, settings, 'elsewhere', { env: 'nowhere', url: everything.url }),
    ).rejects.toThrow('no environment "nowhere"');
    await expect(
      acceptMcpAppCommand(db.sql, settings, 'missing', { ...env, version: '1' }),
    ).rejects.toThrow('MCP app "missing"');
  });

  it(
    'runs as the real command, printing the app and failing with one line',
    async () => {
      const env = {
        DATABASE_URL: db.url,
        MCP_APPS_ALLOW_PRIVATE: 'true',
      };
      const registered = await runCli(
        [
          'apps',
          'register',
          'binary',
          '--env',
          'cli-mcp',
          '--url',
          everything.url,
          '--trust-annotations',
          '--json',
        ],
        env,
      );
      expect(registered).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(registered.stdout)).toMatchObject({
        app: 'binary',
        auth: 'none',
        snapshot: { accepted_version: 1 },
      });
      const shown = await runCli(['apps', 'show', 'binary', '--env', 'cli-mcp'], env);
      expect(shown).toMatchObject({ code: 0, stderr: '' });
      expect(shown.stdout).toMatch(/^server URL +http:\/\/127\.0\.0\.1:\d+\/mcp$/m);

      const refused = await runCli(
        ['apps', 'register', 'binary', '--env', 'cli-mcp', '--url', everything.url],
        { ...env, MCP_APPS_ALLOW_PRIVATE: 'false' },
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^gatehouse: .*https/);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    },
    3 * CLI_RUN_BUDGET_MS,
  );
});
