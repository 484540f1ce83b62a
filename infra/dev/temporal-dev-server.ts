import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { searchAttributes } from '../../workflows/search-attributes.js';
import { ensureSearchAttributes } from '../temporal/search-attributes.js';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
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
   * there to show them decoded to an operator holding a full key (issue 12).
   */
  codecEndpoint?: string;
  onLog?: (line: string) => void;
  readyTimeoutMs?: number;
}

/**
 * How the kept SQLite file is written (issue 24.4). The server's own default is a rollback
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

async function waitUntilServing(
  address: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`Temporal dev server exited with code ${child.exitCode}:\n${output()}`);
    }
    // Closed whatever happens: an attempt that reached another program on the port (one that
    // took it before the server could, issue 20.1) would otherwise keep its socket open.
    const connection = Connection.lazy({ address, connectTimeout: 1000 });
    try {
      await connection.withDeadline(Date.now() + 2000, () =>
        connection.workflowService.getSystemInfo({}),
      );
      return;
    } catch {
      if (Date.now() > deadline) {
        throw new Error(
          `Temporal dev server on ${address} not ready after ${timeoutMs} ms:\n${output()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await connection.close();
    }
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
  // idle machine (issue 14). A cluster's own setting is worth checking too (README, production).
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

  const child = spawn(options.cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let recent = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    recent = (recent + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) options.onLog?.(line);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );

  const address = `127.0.0.1:${options.port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    await waitUntilServing(address, child, options.readyTimeoutMs ?? 60_000, () => recent);
    const connection = await Connection.connect({ address });
    try {
      await ensureSearchAttributes(connection, options.namespace);
    } finally {
      await connection.close();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    address,
    uiUrl: options.uiPort === null ? null : `http://127.0.0.1:${options.uiPort}`,
    stop,
  };
}
