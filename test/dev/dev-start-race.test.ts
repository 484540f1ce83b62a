import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { runCli } from '../support/cli.js';
import {
  devDataFolder,
  spawnDev,
  stopDev,
  untilReady,
  type DevProcess,
  type DevStatePorts,
} from '../support/dev-process.js';

const script = fileURLToPath(new URL('../support/dev-taking-ports.ts', import.meta.url));

let dataDir: string;
let dev: DevProcess | undefined;
/** The preferred ports, all free when the stack starts: it chooses every one of them. */
let preferred: DevStatePorts;

beforeAll(async () => {
  ({ dir: dataDir, ports: preferred } = await devDataFolder('gatehouse-dev-race-'));
});

afterAll(async () => {
  if (dev) await stopDev(dev);
  await rm(dataDir, { recursive: true, force: true });
});

describe('gatehouse dev, when another program takes a port between its choice and its bind', () => {
  it('starts all the same: the Node servers hold theirs, Postgres and Temporal move and say so', async () => {
    dev = spawnDev({ dataDir, script });
    await untilReady(dev);
    const output = dev.output();

    // What Gatehouse serves itself was bound when it was chosen: the other program got none.
    expect(output).toContain(`held api ${String(preferred.api)}`);
    expect(output).toContain(`held demoApp ${String(preferred.demoApp)}`);
    expect(output).toContain(`held temporalUi ${String(preferred.temporalUi)}`);
    expect(output).toContain(`held identityProvider ${String(preferred.identityProvider)}`);
    expect(dev.field('API')).toBe(`http://127.0.0.1:${String(preferred.api)}`);
    expect(dev.field('Demo app')).toBe(`http://127.0.0.1:${String(preferred.demoApp)}`);
    expect(dev.field('Temporal UI')).toBe(`http://127.0.0.1:${String(preferred.temporalUi)}`);
    expect(dev.field('Sign-in IdP')).toBe(`http://127.0.0.1:${String(preferred.identityProvider)}`);

    // What it spawns found its port taken at bind time, and started on another, announced.
    expect(output).toContain(`took postgres ${String(preferred.postgres)}`);
    expect(output).toContain(`took temporal ${String(preferred.temporal)}`);
    const temporalPort = Number(dev.field('Temporal').split(':')[1]);
    const postgresPort = Number(new URL(dev.field('Postgres')).port);
    expect(temporalPort).not.toBe(preferred.temporal);
    expect(postgresPort).not.toBe(preferred.postgres);
    expect(output).toContain(
      `  ! Port ${String(preferred.temporal)} is taken by another program: the Temporal is on port ${String(temporalPort)} instead.`,
    );
    expect(output).toContain(
      `  ! Port ${String(preferred.postgres)} is taken by another program: the Postgres is on port ${String(postgresPort)} instead.`,
    );
    // The preferred port stays the one tried at the next start; the CLI finds the running
    // database where it runs now (the port it would try first is held by the other program).
    const state = JSON.parse(await readFile(path.join(dataDir, 'local-state.json'), 'utf8')) as {
      postgres: { port: number };
    };
    expect(state.postgres.port).toBe(preferred.postgres);
    const listed = await runCli(['envs', 'list', '--json'], { GATEHOUSE_DATA_DIR: dataDir });
    expect(listed).toMatchObject({ code: 0, stdout: expect.stringContaining('development') });

    // And everything serves.
    const apiUrl = dev.field('API');
    expect((await fetch(`${apiUrl}/readyz`)).status).toBe(200);
    const policy = await fetch(`${apiUrl}/v1/policies/default`, {
      headers: { authorization: `Bearer ${dev.field('Agent key')}` },
    });
    expect(policy.status).toBe(200);
    const discovery = await fetch(`${dev.field('Demo app')}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect((await fetch(dev.field('Temporal UI'))).status).toBe(200);
    const signIn = await fetch(`${dev.field('Sign-in IdP')}/.well-known/openid-configuration`);
    expect(signIn.status).toBe(200);
    const connection = await Connection.connect({ address: dev.field('Temporal') });
    try {
      await connection.workflowService.getSystemInfo({});
    } finally {
      await connection.close();
    }
    expect(await stopDev(dev)).toBe(0);
  }, 240_000);
});
