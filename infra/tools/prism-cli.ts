// Stoplight Prism, the mock server the OpenAPI import tests and benchmarks put in front of a
// document, installed on demand into the machine's tools cache (machine-cache.ts) rather than as
// a devDependency: its 213 packages (74 MB) would come with every `npm install` though only those
// tests and benchmarks run it, and 5.16.0 declares Node >= 24.18, so on the project's Node 20
// every install would warn and an `engine-strict` one fail. infra/tools/prism/ holds its
// package.json and lock file: `npm ci` installs exactly those versions, each checked against the
// lock's integrity, and the cache folder is named after the lock's hash, so a changed lock is a
// new install.
//
// Prism runs on the Node running this code. It declares Node >= 24.18 since 5.15 (Node 20 left
// support), yet uses nothing newer than Node 20 has; what the tests use of it (mock mode, request
// validation, examples) is exercised on Node 20 by test/openapi-apps/prism-upstream.test.ts, as
// oidc-provider's flows are (infra/README.md), so a second Node is not downloaded for it.
import { createHash } from 'node:crypto';
import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCached, runTool } from './machine-cache.js';

export const PRISM_VERSION = '5.16.0';
const PACKAGE = '@stoplight/prism-cli';
const LOCK_DIR = fileURLToPath(new URL('./prism/', import.meta.url));

/** How to run Prism: `spawn(command, [...args, 'mock', document, …])`. */
export interface PrismCommand {
  /** The Node executable. */
  command: string;
  /** Prism's script, before Prism's own arguments. */
  args: string[];
  version: string;
}

/** Prism's command, installed into the cache when missing. */
export async function ensurePrism(): Promise<PrismCommand> {
  const lock = await readFile(path.join(LOCK_DIR, 'package-lock.json'));
  const lockHash = createHash('sha256').update(lock).digest('hex').slice(0, 12);
  const { dir } = await ensureCached({
    name: `prism-cli-${PRISM_VERSION}-${lockHash}`,
    what: `Prism (${PACKAGE}@${PRISM_VERSION})`,
    build: async (into) => {
      await copyFile(path.join(LOCK_DIR, 'package.json'), path.join(into, 'package.json'));
      await copyFile(
        path.join(LOCK_DIR, 'package-lock.json'),
        path.join(into, 'package-lock.json'),
      );
      await runTool(
        'npm',
        [
          'ci',
          // @scarf/scarf's install script only reports the download to its vendor.
          '--ignore-scripts',
          '--engine-strict=false',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
        ],
        { cwd: into },
      );
      const command = await prismCommand(into);
      const { stdout } = await runTool(command.command, [...command.args, '--version'], {
        cwd: into,
        env: nodeEnv(),
      });
      if (stdout.trim() !== PRISM_VERSION) {
        throw new Error(`the installed prism says ${stdout.trim()}, not ${PRISM_VERSION}`);
      }
      return `${PACKAGE}@${stdout.trim()}, lock ${lockHash}`;
    },
  });
  return prismCommand(dir);
}

async function prismCommand(dir: string): Promise<PrismCommand> {
  const manifest = path.join(dir, 'node_modules', ...PACKAGE.split('/'), 'package.json');
  const { bin, version } = JSON.parse(await readFile(manifest, 'utf8')) as {
    bin?: Record<string, string>;
    version?: string;
  };
  const script = bin?.['prism'];
  if (!script) throw new Error(`${PACKAGE} in ${dir} declares no prism bin`);
  return {
    command: process.execPath,
    args: [path.join(path.dirname(manifest), script)],
    version: String(version),
  };
}

/**
 * The environment to run Prism's Node in: this process's, less `NODE_OPTIONS`, which hold
 * options for this process (jest's `--experimental-vm-modules`), not Prism's.
 */
export function nodeEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  return env;
}
