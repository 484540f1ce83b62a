import net from 'node:net';
import postgres from 'postgres';
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from '../config.js';
import { watchSilence } from './silence-watch.js';

/** The one way processes get a Postgres handle. Columns are snake_case in SQL, camelCase in TS. */
export type Sql = postgres.Sql<Record<string, unknown>>;

/**
 * How much longer than the quietest legitimate spell (a statement, or a transaction waiting on
 * its client, both ended by Postgres itself) a busy connection may go without a byte from the
 * server before it is dropped as hung.
 */
const SILENCE_MARGIN_MS = 2000;

/** The part of postgres.js's parsed options its `socket` hook receives that we use. */
interface SocketTarget {
  host: string[];
  port: number[];
  path: string | false | undefined;
}

/**
 * postgres.js's `socket` hook (not in its typings): it takes the socket as connected and writes
 * to it at once, which a connecting net.Socket buffers; its own connect_timeout still applies.
 * Hosts are taken in turn, as postgres.js does without the hook.
 */
function watchedSockets(silenceMs: number): (target: SocketTarget) => net.Socket {
  let next = 0;
  return (target) => {
    let socket: net.Socket;
    if (target.path) {
      socket = net.connect(target.path);
    } else {
      const index = next++ % target.host.length;
      const host = target.host[index] ?? 'localhost';
      socket = net.connect({ host, port: target.port[index] ?? 5432 });
      // postgres.js reads it for TLS server name indication.
      Object.assign(socket, { host });
    }
    watchSilence(socket, silenceMs);
    return socket;
  };
}

export function createSql(
  url: string,
  options: { max?: number } & Partial<DatabaseTimeouts> = {},
): Sql {
  const timeouts: DatabaseTimeouts = {
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_DATABASE_TIMEOUTS.connectTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_DATABASE_TIMEOUTS.statementTimeoutMs,
    idleInTransactionTimeoutMs:
      options.idleInTransactionTimeoutMs ?? DEFAULT_DATABASE_TIMEOUTS.idleInTransactionTimeoutMs,
  };
  const silenceMs =
    Math.max(timeouts.statementTimeoutMs, timeouts.idleInTransactionTimeoutMs) + SILENCE_MARGIN_MS;
  const settings: postgres.Options<Record<string, postgres.PostgresType>> & {
    socket: (target: SocketTarget) => net.Socket;
  } = {
    max: options.max ?? 10,
    // Column names only: JSON values (policies, audit bodies, app responses) keep their own keys.
    transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } },
    // Notices (e.g. "relation already exists, skipping") are expected during migrations.
    onnotice: () => undefined,
    connection: {
      application_name: 'gatehouse',
      statement_timeout: timeouts.statementTimeoutMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
    },
    // Seconds, in postgres.js: covers TCP, TLS and authentication.
    connect_timeout: timeouts.connectTimeoutMs / 1000,
    // A pooled connection at rest is closed before the silence watch could take it for a hung
    // one (the watch cannot tell an idle connection from one waiting for an answer).
    idle_timeout: (silenceMs - 1000) / 1000,
    socket: watchedSockets(silenceMs),
  };
  return postgres(url, settings);
}

/** A handle that may be the pool or an open transaction (`sql.begin(tx => …)`). */
export type Db = Sql | postgres.TransactionSql<Record<string, unknown>>;

/**
 * Postgres errors that say the database is unreachable, overloaded or too slow, rather than that
 * the request is wrong: the statement or idle-transaction timeout, a lock wait, too many
 * connections, a server shutting down or starting, and class 08 (connection exceptions).
 */
const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '57014',
  '25P03',
  '55P03',
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);

/**
 * postgres.js's own connection failures, and the socket errors beneath them. The API reaches no
 * other host directly (apps are called by workflows, and Temporal errors are gRPC
 * statuses), so in the API a socket error is the database's. A pool that we ended ourselves
 * (CONNECTION_ENDED, CONNECTION_DESTROYED) is not an outage, and stays a 500.
 */
const UNAVAILABLE_CONNECTION_CODES: ReadonlySet<string> = new Set([
  'CONNECTION_CLOSED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Whether a failed query means "the database did not answer", which a later retry may not meet. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) {
    return UNAVAILABLE_SQLSTATES.has(error.code) || error.code.startsWith('08');
  }
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && UNAVAILABLE_CONNECTION_CODES.has(code);
}

/** The pool a process runs on, as its configuration says (size and every timeout). */
export function createConfiguredSql(database: {
  url: string;
  poolSize: number;
  timeouts: DatabaseTimeouts;
}): Sql {
  return createSql(database.url, { max: database.poolSize, ...database.timeouts });
}
