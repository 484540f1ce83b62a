import { createServer, type Server } from 'node:net';

/** Whether an error is the OS refusing a port another socket listens on. */
export function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE';
}

/** Binds a server that is not listening yet; resolves with the port it got (0: any free one). */
export function bindServer(server: Server, port: number, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      reject(error);
    };
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      const address = server.address();
      if (address && typeof address === 'object') resolve(address.port);
      else reject(new Error('no port assigned'));
    });
  });
}

/**
 * Whether another socket listens on the port now. A spawned service that failed to start asks
 * this to tell a port taken since it was chosen (start it again elsewhere) from any other
 * failure (say so).
 */
export async function isPortTaken(port: number, host = '127.0.0.1'): Promise<boolean> {
  const probe = createServer();
  try {
    await bindServer(probe, port, host);
    return false;
  } catch (error) {
    return isAddressInUse(error);
  } finally {
    if (probe.listening) await new Promise((resolve) => probe.close(resolve));
  }
}

/** Stops a server of ours if it still listens: every stop of a failed start may meet it. */
export async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
    // An HTTP server's idle keep-alive connections would hold `close` open.
    (server as Server & { closeIdleConnections?: () => void }).closeIdleConnections?.();
  });
}
