import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { spawnDev, stopDev, untilReady, writeDevState } from '../support/dev-process.js';
import { privateCheckout, type PrivateCheckout } from '../support/private-checkout.js';

/**
 * Postgres refuses to run as root, so as root the embedded one runs as the `postgres` user. A
 * checkout in root's home (mode 0700, where most containers clone) is out of that user's reach:
 * the binaries in node_modules and the data folder in .data both. `gatehouse dev` and the test
 * set-up must start there all the same.
 */
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

let checkout: PrivateCheckout;

beforeAll(async () => {
  checkout = await privateCheckout();
}, 120_000);

afterAll(async () => {
  // The cluster of a data folder the postgres user cannot reach lives where it can: removed too.
  const dataDir = path.join(checkout.root, '.data', 'postgres');
  const cluster = await realpath(dataDir).catch(() => null);
  await checkout.remove();
  if (cluster && cluster !== dataDir) await rm(cluster, { recursive: true, force: true });
});

asRoot('as root, from a checkout in a folder of mode 0700', () => {
  it('gatehouse dev starts its embedded Postgres, serves, and stops cleanly', async () => {
    const dataDir = path.join(checkout.root, '.data');
    await writeDevState(dataDir);
    const dev = spawnDev({ dataDir, bin: path.join(checkout.root, 'infra', 'cli', 'bin.js') });
    try {
      await untilReady(dev);
      expect(dev.field('Postgres')).toMatch(
        /^postgres:\/\/gatehouse:\*\*\*@127\.0\.0\.1:\d+\/gatehouse$/,
      );
      // Where the cluster is, when not in .data: linked from .data/postgres, and said.
      const cluster = await realpath(path.join(dataDir, 'postgres'));
      expect(cluster).toMatch(/^\/var\/lib\/gatehouse\/postgres-[0-9a-f]{16}$/);
      expect(dev.output()).toContain(`(its cluster is in ${cluster}, which the postgres user`);
      const policy = await fetch(`${dev.field('API')}/v1/policies/default`, {
        headers: { authorization: `Bearer ${dev.field('Agent key')}` },
      });
      expect(policy.status).toBe(200);
    } finally {
      expect(await stopDev(dev)).toBe(0);
    }
    expect(dev.output()).not.toMatch(/^\s+at /m);
    expect(dev.output()).toContain('Stopped.');
  }, 240_000);

  it('the test run starts its Postgres there too (npm test)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(checkout.root, 'test', 'support', 'global-setup-probe.ts')],
      {
        cwd: checkout.root,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        timeout: 180_000,
      },
    );
    expect(stdout).toContain('database answered');
  }, 200_000);
});
