// The MCP conformance runner (@modelcontextprotocol/conformance, `server --url …`) against the
// real MCP server on a minted session: every scenario that applies to a server with its own tools
// passes, and the scenarios that do not apply are exactly the known ones below, so a scenario a
// newer runner adds fails this test until someone decides which list it belongs to (README: "Give
// an agent MCP tools").
import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCallStack } from '../support/call-stack.js';
import { mintSession } from './mcp-client.js';
import { ensureNode22 } from './node22.js';
import { stopsAfterAll } from '../support/stops.js';

/** One run of the whole suite takes seconds; a loaded machine gets plenty more. */
const RUN_TIMEOUT_MS = 120_000;

/** Scenarios that apply to a server with its own tools: each must pass. */
const APPLIES = [
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

/**
 * Scenarios that call the runner's own fixture tools (those of its reference server), by the tool
 * each needs. This server has only its catalog's tools: it answers an unknown tool with -32602
 * (and `json-schema-2020-12` looks for its tool in `tools/list`).
 */
const FIXTURE_TOOL: Record<string, string> = {
  'tools-call-simple-text': 'test_simple_text',
  'tools-call-image': 'test_image_content',
  'tools-call-audio': 'test_audio_content',
  'tools-call-embedded-resource': 'test_embedded_resource',
  'tools-call-mixed-content': 'test_multiple_content_types',
  'tools-call-error': 'test_error_handling',
  'tools-call-with-progress': 'test_tool_with_progress',
  'tools-call-sampling': 'test_sampling',
  'tools-call-elicitation': 'test_elicitation',
  'elicitation-sep1034-defaults': 'test_elicitation_sep1034_defaults',
  'elicitation-sep1330-enums': 'test_elicitation_sep1330_enums',
  'json-schema-2020-12': 'json_schema_2020_12_tool',
  // Pending in the runner; with no such tool it records warnings only, never a pass.
  'server-sse-polling': 'test_reconnection',
};

/** Scenarios of capabilities the server does not offer (tools only): -32601 Method not found. */
const NOT_OFFERED = [
  'logging-set-level',
  'tools-call-with-logging',
  'completion-complete',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
];

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

interface Run {
  /** Exit code; null when the runner was stopped (timeout) or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
}

let run: Run;
/** Every scenario the runner says it ran, in order. */
let ran: string[];
/** Each scenario's checks, as the runner saved them (`<out>/server-<scenario>-<time>/checks.json`). */
const results = new Map<string, Check[]>();

/** The `conformance` bin of the installed package, run with Node 22 rather than via npx. */
function runnerScript(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@modelcontextprotocol/conformance/package.json');
  const { bin } = require(manifest) as { bin: { conformance: string } };
  return path.join(path.dirname(manifest), bin.conformance);
}

function conformance(node: string, args: string[]): Promise<Run> {
  // Jest's NODE_OPTIONS are for this process, not the runner.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((resolve) => {
    execFile(
      node,
      [runnerScript(), ...args],
      { env, timeout: RUN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const tail = (text: string) => text.trim().split('\n').slice(-30).join('\n');

/** What a failing expectation prints: the runner's own words. */
function runnerSaid(): string {
  return `runner exit ${String(run.code)}\nstdout ends:\n${tail(run.stdout)}\nstderr ends:\n${tail(run.stderr)}`;
}

const started = stopsAfterAll();

beforeAll(async () => {
  const node = await ensureNode22();
  // The server checks Origin against PUBLIC_URL (DNS rebinding), and the runner sends the
  // session address's own origin as a valid one: the call stack's API listens where PUBLIC_URL
  // says.
  const stack = started.add(await startCallStack());
  await stack.connect('u_ann');
  // The address carries its secret: the runner, which sets no headers, needs nothing else.
  const session = await mintSession(stack, { user: 'u_ann' });
  const out = await mkdtemp(path.join(tmpdir(), 'gatehouse-conformance-'));
  started.push(() => rm(out, { recursive: true, force: true }));
  run = await conformance(node, ['server', '--url', session.url, '--suite', 'all', '-o', out]);
  ran = [...run.stdout.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => String(m[1]));
  for (const dir of await readdir(out)) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/.exec(dir)?.[1];
    if (scenario === undefined) continue;
    const text = await readFile(path.join(out, dir, 'checks.json'), 'utf8');
    results.set(scenario, JSON.parse(text) as Check[]);
  }
}, 300_000 + RUN_TIMEOUT_MS);

function checksOf(scenario: string): Check[] {
  const checks = results.get(scenario);
  if (!checks) throw new Error(`the runner saved no results for ${scenario}\n${runnerSaid()}`);
  return checks;
}

const failures = (checks: Check[]) =>
  checks
    .filter((check) => check.status === 'FAILURE')
    .map((c) => `${c.id}: ${c.errorMessage ?? ''}`);
const passes = (checks: Check[]) => checks.filter((check) => check.status === 'SUCCESS').length;

describe('the MCP conformance runner (server mode) on a minted session', () => {
  it('ran to its end: exactly the scenarios that apply and the known ones that do not', () => {
    // Exit 1: the scenarios that do not apply fail. Null: stopped, or it could not start.
    if (run.code !== 1 || ran.length === 0 || ran.length !== results.size) {
      throw new Error(`the runner did not finish every scenario it started\n${runnerSaid()}`);
    }
    const known = [...APPLIES, ...Object.keys(FIXTURE_TOOL), ...NOT_OFFERED];
    // A scenario in neither list is new: decide whether it applies, and say so in the README.
    expect([...ran].sort()).toEqual([...known].sort());
  });

  it.each(APPLIES)('%s passes', (scenario) => {
    const checks = checksOf(scenario);
    expect(failures(checks)).toEqual([]);
    expect(passes(checks)).toBeGreaterThan(0);
  });

  it.each(Object.entries(FIXTURE_TOOL))(
    '%s does not apply: it needs the fixture tool %s',
    (scenario, tool) => {
      const checks = checksOf(scenario);
      expect(passes(checks)).toBe(0);
      for (const failure of failures(checks)) expect(failure).toContain(tool);
    },
  );

  it.each(NOT_OFFERED)('%s does not apply: Method not found', (scenario) => {
    const checks = checksOf(scenario);
    expect(passes(checks)).toBe(0);
    expect(failures(checks).length).toBeGreaterThan(0);
    for (const failure of failures(checks)) expect(failure).toContain('-32601: Method not found');
  });
});
