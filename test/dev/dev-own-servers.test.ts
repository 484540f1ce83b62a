import { afterAll, describe, expect, it } from '@jest/globals';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { childPidWith } from '../support/child-process.js';
import {
  devDataFolder,
  interruptGroup,
  spawnDev,
  stopDev,
  untilReady,
  type DevProcess,
} from '../support/dev-process.js';

/**
 * A `gatehouse dev` talks only to the Temporal server it started: another stack's server
 * answering on its port (two stacks started moments apart with the same preferred ports) is
 * never taken for its own. Its worker polls its own server, its schedules are made there, and a
 * port it had to leave is announced with a `!` line.
 */

const intruding = fileURLToPath(new URL('../support/dev-intruding-temporal.ts', import.meta.url));
const started: DevProcess[] = [];
const folders: string[] = [];

afterAll(async () => {
  for (const dev of started) await stopDev(dev);
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

/** The identities of the workers polling task queue `gatehouse` on a server. */
async function pollers(address: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const described = await connection.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: 'gatehouse' },
    });
    return described.pollers.map((poller) => poller.identity ?? '');
  } finally {
    await connection.close();
  }
}

/** The ids of the schedules on a server. */
async function schedules(address: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const ids: string[] = [];
    for await (const schedule of new Client({ connection }).schedule.list()) {
      ids.push(schedule.scheduleId);
    }
    return ids;
  } finally {
    await connection.close();
  }
}

/** A worker's default identity is `<pid>@<host>`: the one of this dev process. */
function ownPoller(dev: DevProcess): RegExp {
  return new RegExp(`^${String(dev.child.pid)}@`);
}

function movedLine(dev: DevProcess, service: string): RegExp {
  return new RegExp(
    `^ {2}! Port \\d+ is taken by another program: the ${service} is on port \\d+ instead\\.$`,
    'm',
  );
}

describe('gatehouse dev and the servers it starts', () => {
  it('never takes a Temporal server that appears on its port for its own, nor when its own dies', async () => {
    const { dir } = await devDataFolder('gatehouse-dev-intruder-');
    folders.push(dir);
    const dev = spawnDev({ dataDir: dir, script: intruding });
    started.push(dev);
    await untilReady(dev);
    const intruder = /^intruder (\S+)$/m.exec(dev.output())?.[1] ?? '';
    expect(intruder).toMatch(/^127\.0\.0\.1:\d+$/);
    const own = dev.field('Temporal');
    expect(own).not.toBe(intruder);
    expect(dev.output()).toMatch(movedLine(dev, 'Temporal'));

    // The worker polls its own server alone, and the seal schedule was made there.
    expect(await pollers(own)).toEqual([expect.stringMatching(ownPoller(dev))]);
    expect(await pollers(intruder)).toEqual([]);
    expect(await schedules(intruder)).toEqual([]);
    expect((await schedules(own)).length).toBeGreaterThan(0);

    // Its own server dies while the other still answers on the preferred port: the stack stops,
    // saying why, rather than go on with a server it did not start.
    const port = own.split(':')[1] ?? '';
    process.kill(await childPidWith(['--port', port], dev.child.pid), 'SIGKILL');
    expect(await dev.exited).toBe(1);
    const output = dev.output();
    expect(output).toContain('gatehouse dev stopped: the Temporal dev server stopped by itself.');
    expect(output).toMatch(/Why: +.*signal SIGKILL/);
    expect(output).toContain('What to do:');
    expect(output).not.toMatch(/^\s+at /m);
  }, 240_000);

  it('two stacks started together with the same preferred ports each run on their own servers', async () => {
    const first = await devDataFolder('gatehouse-dev-twin-');
    const second = await devDataFolder('gatehouse-dev-twin-', first.ports);
    folders.push(first.dir, second.dir);
    const devs = [spawnDev({ dataDir: first.dir }), spawnDev({ dataDir: second.dir })];
    started.push(...devs);
    await Promise.all(devs.map((dev) => untilReady(dev)));
    const [a, b] = devs as [DevProcess, DevProcess];

    expect(a.field('Temporal')).not.toBe(b.field('Temporal'));
    expect(new URL(a.field('Postgres')).port).not.toBe(new URL(b.field('Postgres')).port);
    expect(a.field('API')).not.toBe(b.field('API'));
    for (const dev of devs) {
      // Each on its own server: its worker polls it, and no other worker does.
      expect(await pollers(dev.field('Temporal'))).toEqual([expect.stringMatching(ownPoller(dev))]);
      expect((await schedules(dev.field('Temporal'))).length).toBeGreaterThan(0);
      // Every service off its preferred port says so.
      const services = {
        Temporal: Number(dev.field('Temporal').split(':')[1]),
        Postgres: Number(new URL(dev.field('Postgres')).port),
        API: Number(new URL(dev.field('API')).port),
      };
      const preferred = {
        Temporal: first.ports.temporal,
        Postgres: first.ports.postgres,
        API: first.ports.api,
      };
      for (const [service, port] of Object.entries(services) as [
        keyof typeof preferred,
        number,
      ][]) {
        if (port !== preferred[service]) expect(dev.output()).toMatch(movedLine(dev, service));
        else expect(dev.output()).not.toMatch(movedLine(dev, service));
      }
      expect((await fetch(`${dev.field('API')}/readyz`)).status).toBe(200);
      expect((await fetch(dev.field('Temporal UI'))).status).toBe(200);
    }
    for (const dev of devs) expect(await stopDev(dev)).toBe(0);
  }, 300_000);

  it('leaves none of its servers running when Ctrl-C comes during the start', async () => {
    const { dir } = await devDataFolder('gatehouse-dev-interrupted-');
    folders.push(dir);
    const dev = spawnDev({ dataDir: dir, detached: true });
    started.push(dev);
    const parent = dev.child.pid ?? 0;
    // Once its Temporal server runs (its Postgres started before it), Ctrl-C in its terminal.
    const deadline = Date.now() + 120_000;
    let temporal: number | null = null;
    while (temporal === null && dev.child.exitCode === null && Date.now() < deadline) {
      temporal = await childPidWith(['start-dev'], parent).catch(() => null);
      if (temporal === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (temporal === null) throw new Error(`its Temporal server never started:\n${dev.output()}`);
    const postgres = await childPidWith(['-D'], parent);
    await interruptGroup(dev);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const gone = Date.now() + 30_000;
    while ((alive(temporal) || alive(postgres)) && Date.now() < gone) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const left = [temporal, postgres].filter(alive);
    // Whatever a failure leaves is ended here, not left to outlive the run.
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
  }, 180_000);
});
