// The official MCP conformance suite's client auth scenarios (`conformance client --suite auth`,
// @modelcontextprotocol/conformance) against Gatehouse's authorization code: each scenario's
// client is test/mcp-auth/conformance-client.ts, which connects through Gatehouse's own start,
// exchange and step-up. Every scenario the suite runs must pass; the ones the project leaves out
// are exactly the known ones below, with their reason (README, "Govern a remote MCP server"),
// so a scenario a newer runner adds fails this test until someone decides.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { saveMcpClientBranding } from '../../activities/db/mcp-client-branding.js';
import { freePort } from '../../infra/dev/free-port.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ensureNode22 } from '../mcp/node22.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Fourteen clients start at once (the suite runs its scenarios in parallel), each loading
 * Gatehouse's sources: a loaded 2-core machine needs far more than the runner's 30 s default.
 */
const SCENARIO_TIMEOUT_MS = 240_000;

/** The scenarios of the current specification (2025-11-25) the suite runs: each must pass. */
const PASSES = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
];

/** Scenarios the project leaves out, with why; none so far. */
const LEFT_OUT: Record<string, string> = {};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  description?: string;
  errorMessage?: string;
}

const client = fileURLToPath(new URL('./conformance-client.ts', import.meta.url));

let db: TestDatabase;
let run: { code: number | null; stdout: string; stderr: string };
/** Each scenario's checks, as the runner saved them (`<out>/auth/<scenario>-<time>/checks.json`). */
const results = new Map<string, Check[]>();
/** Each scenario's client output, for failure messages. */
const outputs = new Map<string, string>();

function runnerScript(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@modelcontextprotocol/conformance/package.json');
  const { bin } = require(manifest) as { bin: { conformance: string } };
  return path.join(path.dirname(manifest), bin.conformance);
}

const started = stopsAfterAll();

beforeAll(async () => {
  const node = await ensureNode22();
  db = started.add(await createTestDatabase());
  const config = testConfig(db.url, { API_PORT: String(await freePort()) });
  const environment = await ensureEnvironment(db.sql, 'conformance');
  await saveMcpClientBranding(
    db.sql,
    environment.id,
    {
      clientName: 'Gatehouse conformance',
      logoUri: null,
      clientUri: null,
      policyUri: null,
      tosUri: null,
    },
    'test',
  );
  const out = await mkdtemp(path.join(tmpdir(), 'gatehouse-auth-conformance-'));
  started.push(() => rm(out, { recursive: true, force: true }));
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: db.url,
    ENCRYPTION_KEY: config.encryption.current.key.toString('base64'),
    ENCRYPTION_KEY_ID: config.encryption.current.id,
    PUBLIC_URL: config.api.publicUrl,
    MCP_APPS_ALLOW_PRIVATE: 'true',
    CONFORMANCE_ENVIRONMENT: environment.name,
    LOG_LEVEL: 'warn',
  };
  // Jest's options are for this process, not the runner or its clients.
  delete env.NODE_OPTIONS;
  // The clients run on this Node (Gatehouse's), the runner on Node 22 (test/mcp/node22.ts).
  const command = `${process.execPath} --import tsx ${client}`;
  const args = [runnerScript(), 'client', '--command', command, '--suite', 'auth'];
  args.push('--timeout', String(SCENARIO_TIMEOUT_MS), '-o', out);
  run = await new Promise((resolve) => {
    execFile(
      node,
      args,
      { env, timeout: SCENARIO_TIMEOUT_MS + 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : null) : 0,
          stdout,
          stderr,
        });
      },
    );
  });
  for (const dir of await readdir(path.join(out, 'auth')).catch(() => [])) {
    const name = /^(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(dir)?.[1];
    if (name === undefined) continue;
    const folder = path.join(out, 'auth', dir);
    results.set(
      `auth/${name}`,
      JSON.parse(await readFile(path.join(folder, 'checks.json'), 'utf8')) as Check[],
    );
    const stdout = await readFile(path.join(folder, 'stdout.txt'), 'utf8').catch(() => '');
    const stderr = await readFile(path.join(folder, 'stderr.txt'), 'utf8').catch(() => '');
    outputs.set(`auth/${name}`, `${stdout}\n${stderr}`.trim().split('\n').slice(-20).join('\n'));
  }
}, 600_000);

const tail = (text: string) => text.trim().split('\n').slice(-30).join('\n');

describe('the MCP conformance runner, client auth suite, on Gatehouse', () => {
  it('ran exactly the known scenarios', () => {
    const ran = [...results.keys()].sort();
    if (ran.length === 0) {
      throw new Error(`no results\nstdout:\n${tail(run.stdout)}\nstderr:\n${tail(run.stderr)}`);
    }
    // A scenario in neither list is new: decide, and say so in the README.
    expect(ran).toEqual([...PASSES, ...Object.keys(LEFT_OUT)].sort());
  });

  it.each(PASSES)('%s passes', (scenario) => {
    const checks = results.get(scenario) ?? [];
    const wrong = checks
      .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
      .map(
        (check) => `${check.status} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`,
      );
    expect({ wrong, client: wrong.length ? outputs.get(scenario) : '' }).toEqual({
      wrong: [],
      client: '',
    });
    expect(checks.filter((check) => check.status === 'SUCCESS').length).toBeGreaterThan(0);
  });

  it('the runner says every scenario passed', () => {
    expect(run.stdout).toMatch(/Total: \d+ passed, 0 failed, 0 warnings/);
  });
});
