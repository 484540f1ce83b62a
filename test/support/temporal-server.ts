import { freePort } from '../../infra/dev/free-port.js';
import { startOnFreePorts } from '../../infra/dev/port-retry.js';
import {
  startTemporalDevServer,
  type TemporalDevServer,
} from '../../infra/dev/temporal-dev-server.js';
import { resolveTemporalCli } from '../../infra/tools/temporal-binaries.js';
import { startTcpProxy } from './tcp-proxy.js';

/**
 * A Temporal dev server of a test's own. The CLI must be told its port: each start takes a free
 * one and, when another program took it before the server could listen, starts again on another
 * (bounded, infra/dev/port-retry.ts).
 */
export async function startTestTemporal(
  options: { dbFile?: string } = {},
): Promise<TemporalDevServer & { port: number }> {
  const cli = await resolveTemporalCli();
  const { started, ports } = await startOnFreePorts({ port: await freePort() }, ({ port }) =>
    startTemporalDevServer({
      cli,
      port,
      uiPort: null,
      namespace: 'default',
      ...(options.dbFile ? { dbFile: options.dbFile } : {}),
    }),
  );
  return Object.assign(started, { port: ports.port });
}

/**
 * A test's own Temporal dev server that it stops and starts again, at one address throughout:
 * a loopback proxy on a port bound (port 0) for the test's whole life, in front of a server that
 * starts each time on a fresh port. Started again on the port it had, it could find the port
 * taken meanwhile (by any program choosing a free port, or the local end of an outgoing
 * connection); the clients, which keep their address, would never reach it. While the server is
 * stopped, a connection to the address is accepted and closed at once.
 */
export interface RestartableTemporal {
  /** What the API and workers are given (TEMPORAL_ADDRESS). */
  address: string;
  /** The running server's own port (to find its process), or null while stopped. */
  serverPort(): number | null;
  stop(): Promise<void>;
  /** Starts it again with the data it had (`dbFile`). */
  start(): Promise<void>;
  /** Stops the server if it runs, and the proxy. */
  close(): Promise<void>;
}

export async function startRestartableTemporal(options: {
  dbFile: string;
}): Promise<RestartableTemporal> {
  let server: (TemporalDevServer & { port: number }) | null = await startTestTemporal(options);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: server.port });
  const temporal: RestartableTemporal = {
    address: `${proxy.host}:${String(proxy.port)}`,
    serverPort: () => server?.port ?? null,
    async stop() {
      const running = server;
      server = null;
      proxy.retarget(null);
      await running?.stop();
    },
    async start() {
      if (server) throw new Error('the Temporal server already runs');
      server = await startTestTemporal(options);
      proxy.retarget({ host: '127.0.0.1', port: server.port });
    },
    async close() {
      await temporal.stop();
      await proxy.close();
    },
  };
  return temporal;
}
