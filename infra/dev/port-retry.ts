import { isPortTaken } from './bind-port.js';
import { freePort } from './free-port.js';
import { messageOf } from './start-failure.js';

/**
 * Starts a service Gatehouse spawns (Postgres, Temporal) on ports chosen earlier. Another
 * program may have taken one since: when the start fails and one of its ports is
 * taken now, or the failure says an address is in use, it starts again with each taken port
 * replaced by a free one. Any other failure is the service's own, and is thrown as it is.
 */
export async function startOnFreePorts<Ports extends Record<string, number>, Started>(
  chosen: Ports,
  start: (ports: Ports) => Promise<Started>,
  attempts = 4,
): Promise<{ started: Started; ports: Ports }> {
  const ports = { ...chosen };
  for (let attempt = 1; ; attempt++) {
    try {
      return { started: await start(ports), ports };
    } catch (error) {
      if (attempt >= attempts) throw error;
      const taken: string[] = [];
      for (const [name, port] of Object.entries(ports))
        if (await isPortTaken(port)) taken.push(name);
      if (taken.length === 0 && !/address already in use|EADDRINUSE/i.test(messageOf(error))) {
        throw error;
      }
      for (const name of taken) (ports as Record<string, number>)[name] = await freePort();
    }
  }
}
