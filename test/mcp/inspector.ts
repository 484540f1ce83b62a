// The MCP Inspector's command line (@modelcontextprotocol/inspector --cli), the client the README
// tells people to try a session with. The tests run the exact version the README pins, and the
// newest checked one, installed on first use into the machine's test-tools cache
// (support/tools-cache.ts, as the conformance runner's Node 22 is): not a dependency of the
// project, since nothing but these tests runs it, and the newest declares Node 22 while the
// project and its scripts run on Node 20.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testToolsDir } from '../support/tools-cache.js';

const run = promisify(execFile);

export const INSPECTOR_PACKAGE = '@modelcontextprotocol/inspector';
const TOOLS = testToolsDir();
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The version in the README's Inspector command; the test fails when the command is unpinned. */
export async function readmeInspectorVersion(): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const pinned = /npx @modelcontextprotocol\/inspector@(\d+\.\d+\.\d+) --cli /.exec(readme);
  if (!pinned?.[1]) {
    throw new Error(
      "The README's MCP Inspector command must pin a version (`npx @modelcontextprotocol/inspector@x.y.z --cli …`): unpinned, npx on Node 20 installs whichever version declares Node 20, today 0.15.0.",
    );
  }
  return pinned[1];
}

/**
 * The Inspector's `mcp-inspector` script at `version`, installed when missing with npm's own
 * client (exact version, no install scripts) into a scratch directory renamed into place last.
 */
export async function ensureInspector(version: string): Promise<string> {
  const dir = path.join(TOOLS, `mcp-inspector-${version}`);
  const stamp = path.join(dir, '.installed');
  if (!(await exists(stamp))) await install(version, dir, stamp);
  const manifest = path.join(dir, 'node_modules', ...INSPECTOR_PACKAGE.split('/'), 'package.json');
  const { bin } = JSON.parse(await readFile(manifest, 'utf8')) as {
    bin: Record<string, string>;
  };
  const script = bin['mcp-inspector'];
  if (!script) throw new Error(`${INSPECTOR_PACKAGE}@${version} has no mcp-inspector bin`);
  return path.join(path.dirname(manifest), script);
}

async function install(version: string, dir: string, stamp: string): Promise<void> {
  await mkdir(TOOLS, { recursive: true });
  const tmp = path.join(
    TOOLS,
    `.tmp-mcp-inspector-${String(process.pid)}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(tmp);
  try {
    await writeFile(path.join(tmp, 'package.json'), '{"private":true}\n');
    await run(
      'npm',
      [
        'install',
        `${INSPECTOR_PACKAGE}@${version}`,
        '--save-exact',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      { cwd: tmp, timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    await writeFile(path.join(tmp, '.installed'), `${INSPECTOR_PACKAGE}@${version}\n`);
    // A directory without the stamp is an install that never finished.
    if (!(await exists(stamp))) await rm(dir, { recursive: true, force: true });
    try {
      await rename(tmp, dir);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // Another test file finished the same install first: its copy is as good as ours.
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await exists(stamp))) throw err;
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export interface InspectorRun {
  /** Exit code; null when it was stopped (timeout) or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One `--cli` command, as the README writes it, with the given Node. */
export function inspectorCli(node: string, script: string, args: string[]): Promise<InspectorRun> {
  // Jest's NODE_OPTIONS are for this process, not the Inspector.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((resolve) => {
    execFile(
      node,
      [script, '--cli', ...args],
      { env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
