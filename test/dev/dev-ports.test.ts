import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import { replacedPortLines } from '../../infra/cli/dev.js';
import { closeServer, isPortTaken } from '../../infra/dev/bind-port.js';
import { pickDevPorts } from '../../infra/dev/dev-ports.js';
import { freePort } from '../../infra/dev/free-port.js';
import type { LocalState } from '../../infra/dev/local-state.js';
import { DevStartError } from '../../infra/dev/start-failure.js';
import { devShellExports } from '../../infra/dev/shell-exports.js';

let taken: Server;
let takenPort: number;

beforeAll(async () => {
  taken = createServer();
  takenPort = await new Promise<number>((resolve) => {
    taken.listen(0, '127.0.0.1', () => {
      resolve((taken.address() as { port: number }).port);
    });
  });
});

afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
});

async function stateWith(ports: { api: number; demoApp: number }): Promise<LocalState> {
  return {
    postgres: { port: await freePort(), password: 'p' },
    encryptionKey: 'k',
    temporal: { port: await freePort(), uiPort: await freePort() },
    api: { port: ports.api },
    demoApp: { port: ports.demoApp, clientId: 'c', clientSecret: 's' },
    identityProvider: { port: await freePort(), clientId: 'c', clientSecret: 's' },
    mailCatcher: { smtpPort: await freePort(), webPort: await freePort() },
  };
}

describe('dev stack ports', () => {
  it('keeps free preferred ports and reports each taken one with its replacement', async () => {
    const demoApp = await freePort();
    const { ports, replaced } = await pickDevPorts(await stateWith({ api: takenPort, demoApp }));
    expect(ports.demoApp).toBe(demoApp);
    expect(ports.api).not.toBe(takenPort);
    expect(replaced).toEqual([{ service: 'API', preferred: takenPort, actual: ports.api }]);
    expect(replacedPortLines(replaced)[0]).toBe(
      `  ! Port ${takenPort} is taken by another program: the API is on port ${ports.api} instead.`,
    );
  });

  it('binds the servers of the process itself on their chosen port, and keeps them', async () => {
    const free = await freePort();
    const servers = {
      api: createServer(),
      demoApp: createServer(),
      identityProvider: createServer(),
    };
    try {
      const { ports, replaced } = await pickDevPorts(
        await stateWith({ api: free, demoApp: takenPort }),
        { servers },
      );
      expect(ports.api).toBe(free);
      expect((servers.api.address() as { port: number }).port).toBe(free);
      expect((servers.demoApp.address() as { port: number }).port).toBe(ports.demoApp);
      expect((servers.identityProvider.address() as { port: number }).port).toBe(
        ports.identityProvider,
      );
      expect(replaced).toEqual([
        { service: 'Demo app', preferred: takenPort, actual: ports.demoApp },
      ]);
      // Held, not only chosen: another program can no longer take them.
      expect(await isPortTaken(ports.api)).toBe(true);
      expect(await isPortTaken(ports.demoApp)).toBe(true);
      expect(await isPortTaken(ports.identityProvider)).toBe(true);
    } finally {
      for (const server of Object.values(servers)) await closeServer(server);
    }
  });

  it('refuses an API_PORT the user set that is taken, naming it and what to do', async () => {
    const state = await stateWith({ api: await freePort(), demoApp: await freePort() });
    const refused = pickDevPorts(state, { apiPort: takenPort, servers: { api: createServer() } });
    await expect(refused).rejects.toThrow(DevStartError);
    await expect(refused).rejects.toMatchObject({
      component: 'API',
      remedy: expect.stringContaining('unset API_PORT') as unknown,
    });
  });

  it('never replaces an API_PORT the user set, nor ports of services that run elsewhere', async () => {
    const state = await stateWith({ api: await freePort(), demoApp: await freePort() });
    state.postgres.port = takenPort;
    const { ports, replaced } = await pickDevPorts(state, { apiPort: 4321, skip: ['postgres'] });
    expect(ports.api).toBe(4321);
    expect(replaced).toEqual([]);
    expect(replacedPortLines(replaced)).toEqual([]);
  });

  it('prints the shell exports the README examples use, quoting only what needs it; the mail catcher’s page when the running stack recorded it', () => {
    const values = {
      apiUrl: 'http://127.0.0.1:3000',
      agentKey: 'gk_development_a-b_c',
      adminKey: "odd key's",
    };
    expect(devShellExports({ ...values, mailUrl: 'http://127.0.0.1:1080' })).toBe(
      `export GATEHOUSE_URL=http://127.0.0.1:3000 AGENT_KEY=gk_development_a-b_c ADMIN_KEY='odd key'\\''s' MAIL_URL=http://127.0.0.1:1080`,
    );
    // A stack started by an older version recorded no mail page: the rest is still printed.
    expect(devShellExports({ ...values, mailUrl: null })).toBe(
      `export GATEHOUSE_URL=http://127.0.0.1:3000 AGENT_KEY=gk_development_a-b_c ADMIN_KEY='odd key'\\''s'`,
    );
  });
});
