import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../infra/config.js';
import { freePort } from '../../infra/dev/free-port.js';
import { testEnv } from './stack-env.js';

const cli = fileURLToPath(new URL('../../infra/cli/bin.js', import.meta.url));

/** How a service process ended: `code` 0 and no `signal` for a clean stop. */
export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  kind: 'api' | 'worker';
  pid: number;
  /** The API's own address (its port); empty for a worker. */
  url: string;
  /**
   * Its Prometheus endpoint as the process reported it when ready (METRICS_ADDRESS may name
   * port 0: the process binds a free one and says which), or null without one.
   */
  metricsUrl: string | null;
  /** The last few kilobytes the process wrote, for failure messages. */
  output(): string;
  /** Whether the process has ended. */
  exited(): boolean;
  /**
   * SIGTERM, as a process manager stops it, and waits for the process to end (the worker
   * drains, the API finishes the requests in flight). SIGKILL only if it has not ended after
   * `graceMs`, so that a hung shutdown shows up as a signal rather than a hung test.
   */
  stop(graceMs?: number): Promise<ServiceExit>;
}

/**
 * The environment `gatehouse api` and `gatehouse worker` need to serve `config`'s task queue
 * from `config`'s database, with `config`'s key and apps: every process of a test file gets the
 * same, as every process of one deployment does.
 */
export function serviceEnv(config: Config): Record<string, string> {
  return {
    DATABASE_URL: config.database.url,
    // Several processes share the test's Postgres: a few connections each is plenty.
    DATABASE_POOL_SIZE: '4',
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_NAMESPACE: config.temporal.namespace,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    ENCRYPTION_KEY: config.encryption.current.key.toString('base64'),
    ENCRYPTION_KEY_ID: config.encryption.current.id,
    APP_URLS: JSON.stringify(config.apps.urls),
    PLATFORM_OAUTH_CLIENTS: JSON.stringify(config.apps.platformClients),
    UPSTREAM_TIMEOUT_MS: String(config.upstream.timeoutMs),
    REQUEST_DEADLINE_MS: String(config.requests.deadlineMs),
    APPROVED_RETRY_WINDOW_SECONDS: String(config.approvals.retryWindowSeconds),
    WEBHOOK_ALLOW_PRIVATE: String(config.webhooks.allowPrivate),
    // `info`: the worker says when it runs, which is how its start is awaited.
    LOG_LEVEL: 'info',
    // The run's bundle, made once by the global set-up.
    WORKFLOW_BUNDLE_CACHE: testEnv('workflowBundleCache'),
  };
}

async function until(
  ready: () => Promise<boolean> | boolean,
  failed: () => string | null,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = failed();
    if (failure !== null) throw new Error(`${what}: ${failure}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${String(timeoutMs)} ms`);
    await sleep(250);
  }
}

/** The log line each process writes once it serves: the API once it listens on its port. */
const READY_MESSAGE = { api: 'api listening', worker: 'worker running' } as const;

interface ReadyLine {
  msg: string;
  url?: string;
  metrics?: string | null;
}

/** The process's own "ready" log line, parsed, when `line` is it. */
function readyLineOf(kind: 'api' | 'worker', line: string): ReadyLine | null {
  if (!line.includes(READY_MESSAGE[kind])) return null;
  try {
    const parsed = JSON.parse(line) as ReadyLine;
    return parsed.msg === READY_MESSAGE[kind] ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * `gatehouse api` or `gatehouse worker` as a process of its own, as in production, resolved once
 * it is ready: an API when `/readyz` answers 200 (Postgres and Temporal reachable), a worker when
 * it logs that it runs (it bundles the workflows first, which takes a while on a loaded machine).
 * An API listens on a fresh port; `publicUrl` is the address every API process answers for, as
 * behind a load balancer (default: its own).
 */
export async function startServiceProcess(
  kind: 'api' | 'worker',
  config: Config,
  options: ServiceOptions = {},
): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(kind, config, options);
    } catch (error) {
      // The free port was taken between choosing it and listening on it (the CLI must be told
      // its port, and PUBLIC_URL names it): choose another, a bounded number of times.
      if (!(error instanceof PortTakenError) || attempt === 5) throw error;
    }
  }
}

interface ServiceOptions {
  publicUrl?: string;
  env?: Record<string, string>;
  readyTimeoutMs?: number;
}

class PortTakenError extends Error {}

async function startOnce(
  kind: 'api' | 'worker',
  config: Config,
  options: ServiceOptions,
): Promise<ServiceProcess> {
  const port = kind === 'api' ? await freePort() : 0;
  const url = kind === 'api' ? `http://127.0.0.1:${String(port)}` : '';
  const env: Record<string, string> = {
    ...serviceEnv(config),
    ...(kind === 'api'
      ? { API_HOST: '127.0.0.1', API_PORT: String(port), PUBLIC_URL: options.publicUrl ?? url }
      : {}),
    ...options.env,
  };
  const child = spawn(process.execPath, [cli, kind], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let partial = '';
  const seen: { ready: ReadyLine | null } = { ready: null };
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-16_000);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) seen.ready ??= readyLineOf(kind, line);
  };
  // Always drained: a full pipe would stall the process.
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let exit: ServiceExit | null = null;
  const exited = new Promise<ServiceExit>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  const service: ServiceProcess = {
    kind,
    pid: child.pid ?? 0,
    url,
    metricsUrl: null,
    output: () => tail,
    exited: () => exit !== null,
    async stop(graceMs = 60_000) {
      if (exit) return exit;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(killer);
      return result;
    },
  };

  // The process's own line first: it says this process listens on the port (another program on
  // it would answer /readyz too), and where its metrics are. The API is then ready once /readyz
  // finds Postgres and Temporal reachable.
  const ready =
    kind === 'api'
      ? async () => {
          if (seen.ready?.url !== url) return false;
          try {
            return (await fetch(`${url}/readyz`)).ok;
          } catch {
            return false;
          }
        }
      : () => seen.ready !== null;
  try {
    await until(
      ready,
      () =>
        exit ? `exited (${JSON.stringify(exit)}) before it was ready:\n${tail.slice(-3000)}` : null,
      options.readyTimeoutMs ?? 300_000,
      `gatehouse ${kind}`,
    );
  } catch (error) {
    await service.stop(5_000);
    if (kind === 'api' && tail.includes('EADDRINUSE')) throw new PortTakenError(String(error));
    throw error;
  }
  service.metricsUrl = seen.ready?.metrics ?? null;
  return service;
}
