import path from 'node:path';
import { dataDir } from './local-state.js';
import { messageOf } from './start-failure.js';

/**
 * What to do when a component of `gatehouse dev` does not start, one entry per
 * component, in the words of the person at the terminal. A port taken between the choice and
 * the bind never gets here: the stack moves to another port by itself.
 */
const shown = (file: string) => path.relative(process.cwd(), file) || file;

export const REMEDIES = {
  localState: `${shown(path.join(dataDir, 'local-state.json'))} keeps the local keys and ports: fix it, or delete it to start afresh (new keys).`,
  ports:
    'Something refused a local port: check that 127.0.0.1 can be bound here (the log file has the error).',
  embeddedPostgres: `Another Postgres may be using ${shown(path.join(dataDir, 'postgres'))} (a gatehouse dev still running from this folder?): stop it. Or delete that folder to start from an empty database.`,
  temporalCli: 'Install the Temporal CLI as the message above says (README, "Temporal binaries").',
  temporalServer: `Another Temporal may be using ${shown(path.join(dataDir, 'temporal.sqlite'))} (a gatehouse dev still running from this folder?): stop it. Or delete that file to start with no workflows.`,
  demoApp: `The demo app keeps its state in ${shown(path.join(dataDir, 'demo-app'))}: delete that folder if the log file shows it is unreadable.`,
  identityProvider: `The dev sign-in provider's client is kept in ${shown(path.join(dataDir, 'local-state.json'))} (identityProvider): delete that entry to have a new one made. The log file has the error.`,
  configuration: 'Fix or unset the environment variables named above.',
  worker: 'The worker could not join Temporal: the log file has the error.',
  api: 'The API did not start: the log file has the error.',
  lostPostgres: `Nothing of the stack runs any more. Its last lines are above and in the log file; ${shown(path.join(dataDir, 'postgres'))} is kept.`,
  lostTemporal: `Nothing of the stack runs any more. Its last lines are above and in the log file; ${shown(path.join(dataDir, 'temporal.sqlite'))} is kept.`,
  metrics:
    'METRICS_ADDRESS names an address that cannot be bound here: choose a free port (127.0.0.1:9464), or unset METRICS_ADDRESS.',
  externalTemporal:
    'TEMPORAL_ADDRESS names a Temporal that does not answer: start it, or unset TEMPORAL_ADDRESS so that gatehouse dev runs its own.',
} as const;

/** The database: the user's own (DATABASE_URL) or the embedded one. */
export function databaseRemedy(error: unknown, external: boolean): string {
  if (!external) {
    return `The embedded Postgres answered, but setting up the database failed: delete ${shown(path.join(dataDir, 'postgres'))} to start from an empty one.`;
  }
  if (/ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|CONNECT_TIMEOUT/.test(messageOf(error))) {
    return 'DATABASE_URL names a Postgres that does not answer: start it, or unset DATABASE_URL so that gatehouse dev runs its own.';
  }
  return 'Check DATABASE_URL (server, user, password, database; the user must be able to create tables), or unset it so that gatehouse dev runs its own Postgres.';
}
