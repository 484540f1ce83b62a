import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { ROLES } from '../../activities/db/role-mappings.js';
import type { ReplacedPort } from '../dev/dev-ports.js';
import { dataDir } from '../dev/local-state.js';
import type { DevStack, DevStackOptions } from '../dev/stack.js';
import {
  DevStartError,
  lostServerHeadline,
  startFailureHeadline,
  startFailureLines,
} from '../dev/start-failure.js';
import { clearRunningStack, recordRunningStack } from '../dev/running-stack.js';
import { devShellExports } from '../dev/shell-exports.js';
import { terminalLogStream } from '../dev/terminal-log.js';
import { createLogger } from '../logger.js';
import { signalExitCode, untilShutdownSignal } from './signals.js';

/** What stops `gatehouse dev`: Ctrl-C, a kill, and the terminal closing (SIGHUP). */
const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function redactPassword(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** A path as short as it can be read from here: relative below the working folder. */
function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/**
 * Said loudly and first: a replacement port is silent otherwise, and commands written for the
 * default one (the README's, a bookmark, a script) would reach whatever holds it.
 */
export function replacedPortLines(replaced: readonly ReplacedPort[]): string[] {
  if (!replaced.length) return [];
  return [
    ...replaced.map(
      ({ service, preferred, actual }) =>
        `  ! Port ${preferred} is taken by another program: the ${service} is on port ${actual} instead.`,
    ),
    '  ! Commands written for the default ports would reach that program, not Gatehouse: use the',
    '  ! addresses below, or the shell variables at the end (the README examples do).',
    '',
  ];
}

/**
 * The banner's sign-in part: where people sign in to the console, and, with the dev provider,
 * who can (each person's groups, and the roles those hold in the environment now) and the one
 * password, printed because the provider is a development one.
 */
export function signInLines(
  stack: Pick<DevStack, 'consoleUrl' | 'identityProvider' | 'roleMappings'>,
  password: string,
): string[] {
  const { identityProvider: idp } = stack;
  if (!idp) {
    return [`  Sign in       ${stack.consoleUrl}   (with the provider OIDC_ISSUER_URL names)`];
  }
  const rolesOf = (groups: readonly string[]) => {
    const held = new Set(
      stack.roleMappings.filter((m) => groups.includes(m.group)).flatMap((m) => m.roles),
    );
    return ROLES.filter((role) => held.has(role));
  };
  const rows = idp.accounts.map((account) => ({
    email: account.email,
    groups: account.groups.length ? account.groups.join(', ') : 'none',
    roles: rolesOf(account.groups).join(', ') || 'none',
  }));
  const width = (of: (row: (typeof rows)[number]) => string) =>
    Math.max(...rows.map((row) => of(row).length));
  const emailWidth = width((row) => row.email);
  const groupsWidth = width((row) => row.groups);
  return [
    `  Sign in       ${stack.consoleUrl}   (the console, as one of these people; password "${password}" for all)`,
    ...rows.map(
      (row) =>
        `                ${row.email.padEnd(emailWidth)}   groups: ${row.groups.padEnd(groupsWidth)}   roles: ${row.roles}`,
    ),
    `  Sign-in IdP   ${idp.issuer}   (OpenID Connect, "${idp.name}": a development provider, the console its client)`,
  ];
}

/**
 * The banner's mail line: the catcher's page, and where the development environment's approval
 * e-mails go (the catcher, unless someone set a relay of their own).
 */
export function mailLine(mail: DevStack['mail'], environment: string): string {
  const where =
    mail.channel.to === 'catcher'
      ? `the mail catcher: "${environment}"'s approval e-mails, sent to SMTP ${mail.smtp}`
      : `the mail catcher, SMTP ${mail.smtp}; "${environment}" sends through its own relay ${mail.channel.host}:${String(mail.channel.port)}`;
  return `  Mail          ${mail.url}   (${where})`;
}

/**
 * `gatehouse dev`: starts everything, prints where it is, and stops it all on Ctrl-C. A start
 * that fails says which component failed, why and what to do, in the terminal and in the log
 * file, and exits 1.
 */
export async function runDev(options: DevStackOptions = {}): Promise<void> {
  const logFile = path.join(dataDir, 'logs', 'gatehouse.log');
  await mkdir(path.dirname(logFile), { recursive: true });
  const file = pino.destination({ dest: logFile, sync: false });
  // The file keeps every record as JSON; the terminal shows warnings and errors, one readable
  // line each, so the banner stays in view.
  const logger = createLogger(
    { level: process.env.LOG_LEVEL ?? 'info' },
    pino.multistream([
      { level: 'trace', stream: file },
      { level: 'warn', stream: terminalLogStream(process.stderr) },
    ]),
  );
  console.log(
    'Starting Gatehouse (embedded Postgres, Temporal dev server, worker, API, demo app, sign-in provider, mail catcher):\n' +
      'about 8 s on an idle machine, up to 25 s on a busy one…',
  );
  // Postgres and Temporal run in process groups of their own, so the terminal's Ctrl-C during
  // the start reaches only this process: it ends the start, and what has started is signalled
  // as the process exits (spawnService), as the terminal's signal once reached it directly.
  const endStart = (signal: NodeJS.Signals) => {
    process.exit(signalExitCode(signal));
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, endStart);
  let stack: DevStack;
  try {
    // Loaded here, not at the top: every other `gatehouse` command (`env`, `keys`, …) would
    // otherwise load the API, the worker and the demo app just to start.
    const { startDevStack } = await import('../dev/stack.js');
    stack = await startDevStack(logger, options);
  } catch (error) {
    // The record goes to the file alone (the terminal gets the lines below), written before
    // the process ends.
    createLogger({ level: 'info' }, file).fatal(
      {
        err: error instanceof DevStartError ? error.cause : error,
        ...(error instanceof DevStartError
          ? { component: error.component, remedy: error.remedy }
          : {}),
      },
      startFailureHeadline(error),
    );
    file.flushSync();
    console.error(`\n${startFailureLines(error, shown(logFile)).join('\n')}`);
    process.exitCode = 1;
    return;
  } finally {
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, endStart);
  }
  // From here on a signal stops the stack in order.
  const shutdown = untilShutdownSignal(SHUTDOWN_SIGNALS);
  const { DEV_ENVIRONMENT, DEMO_APP, DEV_KEYS, DEV_PASSWORD } = await import('../dev/stack.js');
  // From the process's own start, so loading the sources counts too: what the user waited.
  const seconds = process.uptime().toFixed(1);
  const { agentKey: agent, adminKey: admin } = DEV_KEYS;
  await recordRunningStack({
    pid: process.pid,
    apiUrl: stack.apiUrl,
    temporalUiUrl: stack.temporalUiUrl,
    temporalAddress: stack.temporalAddress,
    demoAppUrl: stack.demoAppUrl,
    mailUrl: stack.mail.url,
    postgresPort: stack.postgresPort,
  });
  console.log(
    [
      '',
      `Gatehouse is ready (${seconds} s).`,
      '',
      ...replacedPortLines(stack.replacedPorts),
      `  API           ${stack.apiUrl}`,
      `  API docs      ${stack.docsUrl}`,
      `  Temporal UI   ${stack.temporalUiUrl ?? '(external cluster: see its own UI)'}`,
      // Payloads are sealed: this opens the UI able to read them, in one step.
      ...(stack.temporalUiSignInUrl
        ? [
            `  UI sign-in    ${stack.temporalUiSignInUrl}   (opens the Temporal UI with call inputs and answers decoded: signs this browser in with the admin key, 8 h)`,
          ]
        : []),
      `  Temporal      ${stack.temporalAddress}   (namespace ${process.env.TEMPORAL_NAMESPACE ?? 'default'}, task queue ${process.env.TEMPORAL_TASK_QUEUE ?? 'gatehouse'})`,
      `  Demo app      ${stack.demoAppUrl}   (app "${DEMO_APP}", OAuth client registered)`,
      mailLine(stack.mail, DEV_ENVIRONMENT),
      `  Postgres      ${redactPassword(stack.databaseUrl)}${stack.externalDatabase ? '' : `   (embedded, data in ${shown(dataDir)})`}`,
      // Root runs it as the postgres user, which cannot enter this folder: say where it is.
      ...(stack.postgresClusterElsewhere
        ? [
            `                (its cluster is in ${stack.postgresClusterElsewhere}, which the postgres user can reach)`,
          ]
        : []),
      `  Logs          ${shown(logFile)}   (everything, as JSON; here only warnings and errors)`,
      ...(stack.metricsUrl ? [`  Metrics       ${stack.metricsUrl}   (METRICS_ADDRESS)`] : []),
      ...(stack.tracesEndpoint
        ? [`  Traces        ${stack.tracesEndpoint}   (OTEL_EXPORTER_OTLP_ENDPOINT)`]
        : []),
      '',
      ...signInLines(stack, DEV_PASSWORD),
      '',
      `  Agent key     ${stack.agentKey}   (${agent.access}: runs actions and the proxy as agent "${agent.agentId}")`,
      `  Admin key     ${stack.adminKey}   (${admin.access}: management, policies and approval decisions, agent "${admin.agentId}")`,
      `                (environment "${DEV_ENVIRONMENT}"; the agent key cannot decide its own approvals or edit policies)`,
      '',
      '  The README examples use these variables. In another terminal, paste this line, or run',
      '  eval "$(npx gatehouse env)" there, which prints it for the running stack:',
      '',
      `  ${devShellExports({ ...stack, mailUrl: stack.mail.url })}`,
      '',
      '  Try: curl -H "Authorization: Bearer $AGENT_KEY" "$GATEHOUSE_URL/v1/policies/default"',
      '',
      `Press Ctrl-C to stop. State is kept in ${shown(dataDir)} across restarts.`,
    ].join('\n'),
  );
  // A server of the stack that dies ends it too: the rest would go on without it, or reach
  // whatever takes its port next.
  const lost = await Promise.race([shutdown.then(() => null), stack.lost]);
  if (lost) {
    // As a failed start: the record to the file alone, the terminal gets the lines below.
    createLogger({ level: 'info' }, file).fatal(
      { err: lost.cause, component: lost.component, remedy: lost.remedy },
      lostServerHeadline(lost),
    );
    console.error(
      `\n${startFailureLines(lost, shown(logFile), lostServerHeadline(lost)).join('\n')}`,
    );
    process.exitCode = 1;
  } else {
    console.log('\nStopping…');
  }
  await clearRunningStack();
  await stack.stop();
  logger.flush();
  if (!lost) console.log('Stopped.');
}
