import { createServer } from 'node:net';

/** Asks the OS for a free TCP port on loopback (the preferred one when it is still free). */
export async function freePort(preferred = 0, host = '127.0.0.1'): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.once('error', reject);
      server.listen(port, host, () => {
        const address = server.address();
        server.close(() => {
          if (address && typeof address === 'object') resolve(address.port);
          else reject(new Error('no port assigned'));
        });
      });
    });
  if (preferred > 0) {
    try {
      return await tryPort(preferred);
    } catch {
      // Taken: fall through to any free port.
    }
  }
  return tryPort(0);
}
