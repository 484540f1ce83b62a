import { Connection } from '@temporalio/client';
import { searchAttributes } from '../../workflows/search-attributes.js';
import { ensureSearchAttributes } from '../temporal/search-attributes.js';
import {
  describeExit,
  spawnService,
  type ServiceExit,
  type ServiceProcess,
} from './service-process.js';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
  /** Resolves when the server has exited, asked to or not (see `stopping`). */
  exited: Promise<ServiceExit>;
  /** Whether `stop` was called: an exit before that was not asked for. */
  stopping: () => boolean;
  running: () => boolean;
  /** Whether it answers now (it runs, and has not begun to shut down). */
  serving: () => Promise<boolean>;
  /** Its last lines: why it stopped, when it stopped by itself. */
  recent: () => string;
  stop(): Promise<void>;
}

export interface TemporalDevServerOptions {
  /** Path of the `temporal` CLI (see infra/tools/temporal-binaries.ts). */
  cli: string;
  port: number;
  /** Web UI port; null runs headless (tests). */
  uiPort: number | null;
  /** SQLite file that keeps workflows across restarts (KEPT_FILE_PRAGMAS); in memory if absent. */
  dbFile?: string;
  namespace: string;
  /**
   * The Web UI's remote codec (`<API URL>/codec`): payloads are encrypted, and the UI sends them
   * there to show them decoded to an operator holding a full key.
   */
  codecEndpoint?: string;
  onLog?: (line: string) => void;
  readyTimeoutMs?: number;
  /**
   * In a process group of its own (`gatehouse dev`): Ctrl-C in the terminal then reaches only
   * the process that started it, which stops it after the worker has drained.
   */
  detached?: boolean;
}

/**
 * How the kept SQLite file is written. The server's own default is a rollback
 * journal with `synchronous=FULL`: about 8 write transactions per call, each creating, syncing
 * and deleting a journal (32 fsyncs and 8 unlinks a call, counted with strace), which made an
 * allowed read on `gatehouse dev` 1.1–2.1× the bench stack's p50 (README, Benchmark it) and gave
 * it under half the calls/s at concurrency 8. A write-ahead log with `synchronous=NORMAL` syncs
 * only at checkpoints: as fast as memory here. What it gives up: a crash of the machine itself
 * (power, kernel; not of `gatehouse dev` or the server, which lose nothing) may take back what
 * was committed since the log was last synced, at a checkpoint, but never corrupts the file.
 * Right for a development stack; a cluster keeps its own durability settings.
 */
export const KEPT_FILE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;

/** The CLI's own report that its server listens: printed only once the server has started. */
const LISTENING = /^Temporal Server:\s+\S+:(\d+)\s*$/;

/** Asks the server on `address` for its system info; closes the connection whatever happens. */
async function systemInfo(address: string, deadlineMs: number): Promise<void> {
  const connection = Connection.lazy({ address, connectTimeout: Math.min(1000, deadlineMs) });
  try {
    await connection.withDeadline(Date.now() + deadlineMs, () =>
      connection.workflowService.getSystemInfo({}),
    );
  } finally {
    await connection.close();
  }
}

/** Resolves once `check` passes, trying again until the deadline; fails at once if it stopped. */
async function untilAnswered(
  server: ServiceProcess,
  what: string,
  deadline: number,
  check: () => Promise<void>,
): Promise<void> {
  for (;;) {
    if (!server.running()) throw new Error(`it stopped before ${what} answered`);
    try {
      await check();
      // The port is ours only while our server holds it: an answer from a server that has
      // just died is another's.
      if (!server.running()) throw new Error(`it stopped before ${what} answered`);
      return;
    } catch (error) {
      if (!server.running()) throw error;
      if (Date.now() > deadline)
        throw new Error(`${what} did not answer in time`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Waits until the server we started serves, and only that one: another stack's server may
 * answer on the same address (two stacks started moments apart both chose it), so an answer
 * counts only after our server has said it listens there, and while it still runs. With a UI,
 * until the UI answers too: the banner lists it, so it must serve when the banner is printed.
 */
async function untilOwnServerServes(
  server: ServiceProcess,
  listening: Promise<void>,
  address: string,
  uiPort: number | null,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      listening,
      server.exited.then((exit) => {
        throw new Error(`it stopped (${describeExit(exit)})`);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`it did not report listening on ${address} in time`));
        }, timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  await untilAnswered(server, `the server on ${address}`, deadline, () =>
    systemInfo(address, 2000),
  );
  if (uiPort !== null) {
    await untilAnswered(server, `its Web UI on port ${String(uiPort)}`, deadline, async () => {
      const answer = await fetch(`http://127.0.0.1:${String(uiPort)}/`, {
        signal: AbortSignal.timeout(2000),
      });
      await answer.body?.cancel();
      if (answer.status !== 200) throw new Error(`the UI answered ${String(answer.status)}`);
    });
  }
}

/**
 * The Temporal CLI's single-process server with our search attributes registered, so local runs
 * and tests use the same server binary as `temporal server start-dev` users know.
 */
export async function startTemporalDevServer(
  options: TemporalDevServerOptions,
): Promise<TemporalDevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--log-level',
    'warn',
  ];
  args.push('--namespace', options.namespace);
  // The dev server reads its transfer queue at most 20 times a second by default, so every new
  // workflow task waits up to 50 ms for the next read: the largest single cost of a call on an
  // idle machine. A cluster's own setting is worth checking too (README, production).
  args.push('--dynamic-config-value', 'history.transferProcessorMaxPollRPS=1000');
  if (options.dbFile) {
    args.push('--db-filename', options.dbFile);
    for (const pragma of KEPT_FILE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  }
  if (options.uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort), '--ui-disable-news-fetch');
  if (options.uiPort !== null && options.codecEndpoint)
    args.push('--ui-codec-endpoint', options.codecEndpoint);
  for (const key of Object.values(searchAttributes))
    args.push('--search-attribute', `${key.name}=Keyword`);

  let listening: () => void = () => undefined;
  const listeningReported = new Promise<void>((resolve) => {
    listening = resolve;
  });
  const server = await spawnService(options.cli, args, {
    detached: options.detached ?? false,
    onLine: (line) => {
      if (Number(LISTENING.exec(line)?.[1]) === options.port) listening();
      options.onLog?.(line);
    },
  });
  const address = `127.0.0.1:${String(options.port)}`;
  const stop = () => server.stop('SIGTERM', 10_000, 'SIGKILL');
  try {
    await untilOwnServerServes(
      server,
      listeningReported,
      address,
      options.uiPort,
      options.readyTimeoutMs ?? 60_000,
    );
    const connection = await Connection.connect({ address });
    try {
      await ensureSearchAttributes(connection, options.namespace);
    } finally {
      await connection.close();
    }
  } catch (error) {
    await stop();
    throw new Error(
      `Temporal dev server on ${address} did not start: ${(error as Error).message}\n${server.recent()}`,
      { cause: error },
    );
  }
  return {
    address,
    uiUrl: options.uiPort === null ? null : `http://127.0.0.1:${String(options.uiPort)}`,
    exited: server.exited,
    stopping: server.stopping,
    running: server.running,
    serving: () =>
      server.running()
        ? systemInfo(address, 1000).then(
            () => server.running(),
            () => false,
          )
        : Promise.resolve(false),
    recent: server.recent,
    stop,
  };
}
