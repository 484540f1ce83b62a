import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { healthCheck } from '../../workflows/health-check.js';

const bin = fileURLToPath(new URL('../../infra/cli/bin.js', import.meta.url));

interface Running {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  field: (label: string) => string;
}

let dataDir: string;
const started: Running[] = [];

/** Starts `gatehouse dev` in its own data folder and waits for its banner. */
async function startDev(): Promise<Running> {
  const child = spawn(process.execPath, [bin, 'dev'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GATEHOUSE_DATA_DIR: dataDir,
    },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`gatehouse dev not ready:\n${output}`));
    }, 90_000);
    const check = () => {
      if (output.includes('Press Ctrl-C to stop')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gatehouse dev exited (${code}):\n${output}`));
    });
  });
  const field = (label: string) => {
    const match = new RegExp(`^  ${label}\\s{2,}(\\S+)`, 'm').exec(output);
    if (!match?.[1]) throw new Error(`no "${label}" in:\n${output}`);
    return match[1];
  };
  const running = { child, output: () => output, field };
  started.push(running);
  return running;
}

async function stopDev(running: Running): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGINT');
  return exited;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-dev-test-'));
  await chmod(dataDir, 0o755);
});

afterAll(async () => {
  for (const running of started) if (running.child.exitCode === null) await stopDev(running);
  await rm(dataDir, { recursive: true, force: true });
});

describe('gatehouse dev', () => {
  it('starts everything, prints where it is, stops cleanly and keeps state across a restart', async () => {
    const first = await startDev();
    const apiUrl = first.field('API');
    const key = first.field('API key');
    const temporalAddress = first.field('Temporal');
    expect(first.field('API docs')).toBe(`${apiUrl}/docs`);
    expect(key).toMatch(/^gk_development_/);

    const unknown = await fetch(`${apiUrl}/v1/unknown`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const anonymous = await fetch(`${apiUrl}/v1/unknown`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_api_key',
    );
    expect((await fetch(`${apiUrl}/readyz`)).status).toBe(200);
    expect((await fetch(first.field('Temporal UI'))).status).toBe(200);
    const discovery = await fetch(`${first.field('Demo app')}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);

    const put = await fetch(`${apiUrl}/v1/funded-access`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
    });
    expect(put.status).toBe(200);

    const connection = await Connection.connect({ address: temporalAddress });
    const workflowId = `health/${randomUUID()}`;
    try {
      const client = new Client({ connection });
      await client.workflow.execute(healthCheck, { taskQueue: 'gatehouse', workflowId });
    } finally {
      await connection.close();
    }

    expect(await stopDev(first)).toBe(0);
    expect(first.output()).toContain('Stopped.');

    const second = await startDev();
    try {
      expect(second.field('API key')).toBe(key);
      const read = await fetch(`${second.field('API')}/v1/funded-access`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(((await read.json()) as { data: { enabled: boolean } }).data.enabled).toBe(true);
      const again = await Connection.connect({ address: second.field('Temporal') });
      try {
        const described = await new Client({ connection: again }).workflow
          .getHandle(workflowId)
          .describe();
        expect(described.status.name).toBe('COMPLETED');
      } finally {
        await again.close();
      }
    } finally {
      expect(await stopDev(second)).toBe(0);
    }
  }, 240_000);
});
