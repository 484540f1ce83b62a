import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { dataDir } from '../dev/local-state.js';
import { startDevStack, DEV_ENVIRONMENT, DEMO_APP, DEV_KEYS } from '../dev/stack.js';
import { createLogger } from '../logger.js';
import { untilShutdownSignal } from './signals.js';

function redactPassword(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** `gatehouse dev`: starts everything, prints where it is, and stops it all on Ctrl-C. */
export async function runDev(): Promise<void> {
  const started = Date.now();
  const logFile = path.join(dataDir, 'logs', 'gatehouse.log');
  await mkdir(path.dirname(logFile), { recursive: true });
  // The full log goes to a file; the terminal keeps the banner and warnings.
  const logger = createLogger(
    { level: process.env.LOG_LEVEL ?? 'info' },
    pino.multistream([
      { level: 'debug', stream: pino.destination({ dest: logFile, sync: false }) },
      { level: 'warn', stream: process.stderr },
    ]),
  );
  console.log(
    'Starting Gatehouse (embedded Postgres, Temporal dev server, worker, API, demo app)…',
  );
  const stack = await startDevStack(logger);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const { agentKey: agent, adminKey: admin } = DEV_KEYS;
  console.log(
    [
      '',
      `Gatehouse is ready (${seconds} s).`,
      '',
      `  API           ${stack.apiUrl}`,
      `  API docs      ${stack.docsUrl}`,
      `  Temporal UI   ${stack.temporalUiUrl ?? '(external cluster: see its own UI)'}`,
      `  Temporal      ${stack.temporalAddress}   (namespace ${process.env.TEMPORAL_NAMESPACE ?? 'default'}, task queue ${process.env.TEMPORAL_TASK_QUEUE ?? 'gatehouse'})`,
      `  Demo app      ${stack.demoAppUrl}   (app "${DEMO_APP}", OAuth client registered)`,
      `  Postgres      ${redactPassword(stack.databaseUrl)}${stack.externalDatabase ? '' : '   (embedded, data in .data/)'}`,
      `  Logs          ${logFile}`,
      '',
      `  Agent key     ${stack.agentKey}   (${agent.access}: runs actions and the proxy as agent "${agent.agentId}")`,
      `  Admin key     ${stack.adminKey}   (${admin.access}: management, policies and approval decisions, agent "${admin.agentId}")`,
      `                (environment "${DEV_ENVIRONMENT}"; the agent key cannot decide its own approvals or edit policies)`,
      '',
      `  Try: curl -H "Authorization: Bearer ${stack.agentKey}" ${stack.apiUrl}/v1/policies/default`,
      '',
      'Press Ctrl-C to stop. State is kept in .data/ across restarts.',
    ].join('\n'),
  );
  await untilShutdownSignal();
  console.log('\nStopping…');
  await stack.stop();
  logger.flush();
  console.log('Stopped.');
}
