import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { KEPT_FILE_PRAGMAS } from '../dev/temporal-dev-server.js';
import { columns, ratio, type Row } from './columns.js';
import { startDevStackProcess } from './dev-stack.js';
import { measure, summarize, type Measurement } from './measure.js';
import type { Settings } from './scenarios.js';
import { startBenchStack } from './stack.js';

const resultsDir = fileURLToPath(new URL('./results', import.meta.url));

/** The goal: an allowed read on `gatehouse dev` within 1.3× the bench stack's. */
const GOAL = 1.3;

/** Calls per turn: the two stacks take turns, so a change in the machine's load meets both. */
const TURN = 25;

interface Target {
  apiUrl: string;
  key: string;
  user: string;
}

interface Run {
  ms: number[];
  errors: number;
  elapsed: number;
}

const newRun = (): Run => ({ ms: [], errors: 0, elapsed: 0 });
const summary = (run: Run): Measurement => summarize(run.ms, run.errors, run.elapsed);

/** `TURN` calls, one at a time, each timed into the target's run. */
async function takeTurn(target: Target & { run: Run }): Promise<void> {
  const started = performance.now();
  for (let i = 0; i < TURN; i++) {
    const t0 = performance.now();
    const ok = await listTasks(target).catch(() => false);
    target.run.ms.push(performance.now() - t0);
    if (!ok) target.run.errors++;
  }
  target.run.elapsed += performance.now() - started;
}

/** `POST /v1/actions/acme.list_tasks/run`, as the bench's `action, allowed` sends it. */
async function listTasks(target: Target): Promise<boolean> {
  const response = await fetch(`${target.apiUrl}/v1/actions/acme.list_tasks/run`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${target.key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify({ user: target.user, input: {} }),
  });
  await response.arrayBuffer();
  return response.status === 200;
}

/**
 * `npm run bench -- --stack dev`: the stack a user meets first, the real
 * `gatehouse dev` (one process for API, worker and demo app; Temporal's SQLite file), against
 * this benchmark's stack (separate API and worker processes, Temporal in memory), both up at
 * once. Each is warmed up, then both answer the same allowed read one call at a time, taking
 * turns of 25 calls until each has answered `latencyRequests`.
 */
export async function compareDevStack(
  stack: string | undefined,
  settings: Settings,
  log: (line: string) => void,
): Promise<void> {
  if (stack !== 'dev') throw new Error('--stack takes: dev');
  const loadBefore = os.loadavg();
  log('starting the bench stack and gatehouse dev (a first start, in a throwaway folder)');
  const bench = await startBenchStack({ poolSize: 20, apis: 1, workers: 1 });
  try {
    const dev = await startDevStackProcess();
    try {
      const benchTarget = {
        apiUrl: bench.config.api.publicUrl,
        key: bench.key,
        user: bench.user,
        run: newRun(),
      };
      const devTarget = { apiUrl: dev.apiUrl, key: dev.agentKey, user: dev.user, run: newRun() };
      log('warming up both');
      for (const target of [benchTarget, devTarget]) {
        await measure(() => listTasks(target), { concurrency: 1, count: settings.warmup });
      }
      log(`action, allowed, one at a time, ${String(TURN)} calls a turn: both stacks`);
      for (let turn = 0; turn * TURN < settings.latencyRequests; turn++) {
        // Alternate who goes first, so neither always follows the other's last call.
        const order = turn % 2 === 0 ? [benchTarget, devTarget] : [devTarget, benchTarget];
        for (const target of order) await takeTurn(target);
      }
      await report(summary(benchTarget.run), summary(devTarget.run), loadBefore);
    } finally {
      await dev.stop();
    }
  } finally {
    await bench.stop();
  }
}

async function report(bench: Measurement, dev: Measurement, loadBefore: number[]): Promise<void> {
  const p50 = ratio(dev.p50, bench.p50);
  // The machine's load while measuring: a shared machine's figures are read beside it.
  const load = { before: loadBefore[0] ?? 0, after: os.loadavg()[0] ?? 0 };
  const result = {
    time: new Date().toISOString(),
    scenario: 'stack dev: POST /v1/actions/acme.list_tasks/run, one at a time',
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', load1m: load },
    stacks: {
      bench: 'gatehouse api and gatehouse worker as processes, Temporal dev server in memory',
      dev: `gatehouse dev: one process, Temporal on a SQLite file (${KEPT_FILE_PRAGMAS.join(', ')})`,
    },
    bench,
    dev,
    ratios: { p50, p90: ratio(dev.p90, bench.p90), p99: ratio(dev.p99, bench.p99) },
    goal: { goal: `gatehouse dev p50 ≤ ${String(GOAL)}× the bench stack's`, met: p50 <= GOAL },
  };
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${result.time.replace(/[:.]/g, '-')}-stack-dev.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  const row = (name: string, m: Measurement): Row => [
    name,
    m.requests,
    m.errors,
    m.p50,
    m.p90,
    m.p99,
    m.max,
  ];
  const table = columns([
    ['stack', 'requests', 'errors', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    row('bench stack', bench),
    row('gatehouse dev', dev),
    ['dev ÷ bench', '', '', p50, result.ratios.p90, result.ratios.p99, ''],
  ]);
  process.stdout.write(
    `\n${table}\n\n${result.goal.met ? 'met    ' : 'not met'}  ${result.goal.goal}: ${String(p50)}\n` +
      `load average (1 min) ${load.before.toFixed(2)} before, ${load.after.toFixed(2)} after; ` +
      `${String(result.machine.cores)} cores; written to ${path.relative(process.cwd(), file)}\n`,
  );
}
