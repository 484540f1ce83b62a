import { spawn, type ChildProcess } from 'node:child_process';

/** How a service process ended: its exit code, or the signal that ended it. */
export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcessOptions {
  /** Runs it as this user (root starting Postgres, which refuses to run as root). */
  user?: { uid: number; gid: number };
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Starts it in a process group of its own: the terminal's Ctrl-C (SIGINT to the whole
   * foreground group) then reaches only the process that started it, which stops its services
   * in order, each after what depends on it.
   */
  detached?: boolean;
  /** Each line it prints, stdout and stderr alike. */
  onLine?: (line: string) => void;
  /** Sent if this process exits while the service still runs, so none is left behind. */
  exitSignal?: NodeJS.Signals;
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Its last lines, for an error to quote. */
  recent: () => string;
  running: () => boolean;
  /** Resolves once it has exited, whatever the reason. */
  exited: Promise<ServiceExit>;
  /** Whether `stop` was called: an exit after that was asked for. */
  stopping: () => boolean;
  /** Sends `signal` and waits for the exit; sends `lastSignal` when it takes over `graceMs`. */
  stop(signal: NodeJS.Signals, graceMs: number, lastSignal: NodeJS.Signals): Promise<void>;
}

/** "exit code 1" or "signal SIGSEGV", as a sentence says it. */
export function describeExit(exit: ServiceExit): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
}

/**
 * Starts a long-running program Gatehouse depends on (Postgres, the Temporal dev server).
 * Resolves once it runs, or rejects with why it could not be run (a binary another user cannot
 * reach: EACCES): an error a caller can say, where an unhandled 'error' event would end the
 * process with a stack trace.
 */
export async function spawnService(
  command: string,
  args: string[],
  options: ServiceProcessOptions = {},
): Promise<ServiceProcess> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  }).catch((error: unknown) => {
    throw new Error(`could not run ${command}: ${(error as Error).message}`, { cause: error });
  });

  let lines: string[] = [];
  /**
   * The line that says why a Go program crashed (`panic: …`, `fatal error: …`): its stack trace
   * follows, longer than the lines kept, and without it a failure to start names no cause (nor
   * whether an address was in use, which decides whether to start again on another port).
   */
  let crash: string | null = null;
  const collect = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = partial + chunk.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (!line.trim()) continue;
        if (crash === null && /^(panic|fatal error): /.test(line)) crash = line;
        lines = [...lines, line].slice(-20);
        options.onLine?.(line);
      }
    };
  };
  child.stdout.on('data', collect());
  child.stderr.on('data', collect());

  const leftBehind = () => {
    child.kill(options.exitSignal ?? 'SIGTERM');
  };
  process.on('exit', leftBehind);
  let exit: ServiceExit | null = null;
  const exited = new Promise<ServiceExit>((resolve) => {
    child.once('exit', (code, signal) => {
      process.off('exit', leftBehind);
      exit = { code, signal };
      resolve(exit);
    });
  });
  let stopping = false;
  return {
    child,
    recent: () =>
      (crash !== null && !lines.includes(crash) ? [crash, '…', ...lines] : lines).join('\n'),
    running: () => exit === null,
    exited,
    stopping: () => stopping,
    async stop(signal, graceMs, lastSignal) {
      stopping = true;
      if (exit) return;
      child.kill(signal);
      const late = setTimeout(() => child.kill(lastSignal), graceMs);
      await exited;
      clearTimeout(late);
    },
  };
}
