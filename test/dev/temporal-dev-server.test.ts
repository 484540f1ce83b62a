import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../infra/dev/free-port.js';
import {
  startTemporalDevServer,
  type TemporalDevServer,
} from '../../infra/dev/temporal-dev-server.js';
import { resolveTemporalCli } from '../../infra/tools/temporal-binaries.js';

const slowUi = fileURLToPath(new URL('../support/slow-ui-temporal.mjs', import.meta.url));

let dir: string;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-temporal-server-'));
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await rm(dir, { recursive: true, force: true });
});

/** The real Temporal CLI, whose Web UI opens its port `delayMs` after the server starts. */
async function cliWithLateUi(delayMs: number): Promise<string> {
  const wrapper = path.join(dir, `temporal-late-ui-${String(delayMs)}`);
  const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  await writeFile(
    wrapper,
    `#!/bin/sh\nexec ${quoted(process.execPath)} ${quoted(slowUi)} ${quoted(await resolveTemporalCli())} ${String(delayMs)} "$@"\n`,
  );
  await chmod(wrapper, 0o755);
  return wrapper;
}

describe('the Temporal dev server', () => {
  it('is started only once its Web UI answers too: what the banner lists then serves', async () => {
    const server: TemporalDevServer = await startTemporalDevServer({
      cli: await cliWithLateUi(4_000),
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
    });
    stops.push(() => server.stop());
    expect((await fetch(server.uiUrl ?? '')).status).toBe(200);
  }, 120_000);
});
