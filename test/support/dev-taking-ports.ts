/**
 * `gatehouse dev` with another program in the race it must survive: once the ports
 * are chosen, and before the services bind them, this takes every one of them that it can, as a
 * program starting at that moment would, and keeps them until the stack stops. It prints one
 * line per port: `took <service> <port>`, or `held <service> <port>` when Gatehouse already held
 * it. Run as `node --import tsx test/support/dev-taking-ports.ts`, like `gatehouse dev`.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { runDev } from '../../infra/cli/dev.js';

const taken: Server[] = [];
/** What connected to a taken port (Gatehouse's own readiness checks), closed at the end. */
const accepted: Socket[] = [];

function take(port: number): Promise<boolean> {
  const server = createServer((socket) => accepted.push(socket));
  return new Promise((resolve) => {
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      taken.push(server);
      resolve(true);
    });
  });
}

try {
  await runDev({
    onPortsChosen: async (ports) => {
      for (const [service, port] of Object.entries(ports) as [string, number][]) {
        console.log(`${(await take(port)) ? 'took' : 'held'} ${service} ${String(port)}`);
      }
    },
  });
} finally {
  for (const server of taken) server.close();
  for (const socket of accepted) socket.destroy();
}
