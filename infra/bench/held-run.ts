import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { heldCallsScenario, type HeldSettings } from './held-calls.js';
import { heldGoals, heldTable } from './held-report.js';
import type { BenchStack } from './stack.js';

const resultsDir = fileURLToPath(new URL('./results', import.meta.url));

/** `--held [N]`: N = 1,000 with --quick, 10,000 otherwise. */
export function heldCount(argv: string[], mode: 'quick' | 'full'): number | undefined {
  const at = argv.indexOf('--held');
  if (at < 0) return undefined;
  const given = Number(argv[at + 1]);
  if (Number.isInteger(given) && given >= 20) return given;
  return mode === 'quick' ? 1000 : 10_000;
}

/** The measuring phases while all are held take ~1 min quick, a few full: the ttl outlasts them. */
function settingsFor(held: number, mode: 'quick' | 'full'): HeldSettings {
  return mode === 'quick'
    ? {
        held,
        users: 1000,
        latencyRequests: 200,
        throughputSeconds: 5,
        burst: 1000,
        expiringTtlSeconds: 90,
      }
    : {
        held,
        users: 1000,
        latencyRequests: 500,
        throughputSeconds: 15,
        burst: 1000,
        expiringTtlSeconds: 180,
      };
}

/** Runs the held-calls scenario alone, prints it, and writes `results/held-<time>.json`. */
export async function runHeld(
  stack: BenchStack,
  held: number,
  mode: 'quick' | 'full',
  log: (line: string) => void,
): Promise<void> {
  const result = await heldCallsScenario(stack, settingsFor(held, mode), log);
  const time = new Date().toISOString();
  const cpus = os.cpus();
  const machine = `${String(cpus.length)} cores, ${cpus[0]?.model ?? 'unknown'}, ${String(Math.round(os.totalmem() / 2 ** 30))} GiB`;
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `held-${time.replace(/[:.]/g, '-')}.json`);
  const report = {
    time,
    mode,
    machine,
    workerMaxCachedWorkflows: process.env.WORKER_MAX_CACHED_WORKFLOWS ?? 'default',
    goals: heldGoals(result),
    result,
  };
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${heldTable(result)}\n${machine}; written to ${file}\n`);
}
