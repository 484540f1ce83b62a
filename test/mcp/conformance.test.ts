import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { mintSession } from './mcp-client.js';
import { ensureNode22 } from './node22.js';

const RUN_TIMEOUT_MS = 120_000;

let stack: CallStack;
let node22: string;
let runner: string;
let outputDir: string;

beforeAll(async () => {
  node22 = await ensureNode22();
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@modelcontextprotocol/conformance/package.json');
  const { bin } = require(manifest) as { bin: { conformance: string } };
  runner = path.join(path.dirname(manifest), bin.conformance);
  outputDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-conformance-'));
  stack = await startCallStack();
  await stack.connect('u_ann');
}, 600_000);

afterAll(async () => {
  await stack.stop();
  await rm(outputDir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function conformance(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      node22,
      [runner, ...args],
      { timeout: RUN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('conformance', () => {
  it(
    'runs',
    async () => {
      const session = await mintSession(stack, { user: 'u_ann' });
      const started = Date.now();
      const result = await conformance([
        'server',
        '--url',
        session.address.href,
        '--suite',
        'all',
        '-o',
        outputDir,
      ]);
      console.log(Date.now() - started, result.code, result.stdout, result.stderr);
      for (const dir of await readdir(outputDir)) {
        const checks = JSON.parse(
          await readFile(path.join(outputDir, dir, 'checks.json'), 'utf8'),
        ) as { id: string; status: string; errorMessage?: string }[];
        console.log(
          dir,
          checks.map((c) => `${c.id} ${c.status} ${c.errorMessage ?? ''}`),
        );
      }
      expect(result.code).not.toBeNull();
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
