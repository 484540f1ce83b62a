// The README's backend example ("Use the TypeScript client") runs as the README
// shows it: the block between its markers, read from README.md, is saved in this repository and
// run with tsx as a program of its own, importing `gatehouse/client` by the package's name. It
// makes a held write, waits, and prints the approved result, which the app received once, while
// a person approves the call from another key. Its code has no webhook receiver and no polling
// loop: the waiting is the client's.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Inside the repository, so that `gatehouse/client` resolves as the package's own export.
const EXAMPLE = `${ROOT}.data/tmp/readme-client-example-${randomBytes(4).toString('hex')}.ts`;

let stack: CallStack;
let agent: TestKey;
let example: string;

/** The README's ```ts block between `<!-- client-example:start -->` and its end marker. */
function exampleOf(readme: string): string {
  const match =
    /<!-- client-example:start -->\s*```ts\n([\s\S]*?)```\s*<!-- client-example:end -->/.exec(
      readme,
    );
  if (!match?.[1]) throw new Error('the README has no client example between its markers');
  return match[1];
}

const started = stopsAfterAll();

beforeAll(async () => {
  example = exampleOf(await readFile(`${ROOT}README.md`, 'utf8'));
  await mkdir(`${ROOT}.data/tmp`, { recursive: true });
  started.push(() => rm(EXAMPLE, { force: true }));
  await writeFile(EXAMPLE, example);
  stack = started.add(await startCallStack());
  await stack.connect('u_123');
  // `gatehouse dev`'s agent key: standard, agent demo-agent, under the default policy.
  agent = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'demo-agent',
  });
}, 300_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The example as a reader runs it (`npx tsx report.ts`), with the banner's variables. */
function runExample(): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', EXAMPLE], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GATEHOUSE_URL: stack.api.url,
      AGENT_KEY: agent.key,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A person at the inbox: once the call is held, approves it a moment later. */
async function approveWhenHeld(): Promise<string> {
  for (;;) {
    const inbox = await stack.request(stack.approver, 'GET', '/v1/approvals?status=pending');
    const [held] = inbox.body.data as { id: string; action: string }[];
    if (held) {
      expect(held.action).toBe('acme.create_task');
      await sleep(1_500);
      const approved = await stack.request(
        stack.approver,
        'POST',
        `/v1/approvals/${held.id}/approve`,
      );
      expect(approved.status).toBe(200);
      return held.id;
    }
    await sleep(100);
  }
}

describe('the README’s TypeScript client example', () => {
  it('has no webhook receiver and no polling loop of its own', () => {
    expect(example).toContain("from 'gatehouse/client'");
    expect(example).toContain('waitForApproval');
    expect(example).not.toMatch(/\b(for|while|do)\b\s*[({]|setInterval|setTimeout/);
    expect(example).not.toMatch(/verifyWebhook|createServer|listen\(|express/);
  });

  it('makes a held write, waits, and prints the approved result; the app got one task', async () => {
    const [run] = await Promise.all([runExample(), approveWhenHeld()]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/id: 't_.*title: 'Send the quarterly report'/s);

    const listed = await stack.run('acme.list_tasks', { user: 'u_123' });
    const { tasks } = listed.body.data as { tasks: { title: string }[] };
    expect(tasks.filter((task) => task.title === 'Send the quarterly report')).toHaveLength(1);
  });
});
