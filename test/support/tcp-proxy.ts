import net from 'node:net';

export interface TcpProxy {
  /** host:port to connect to instead of the target. */
  host: string;
  port: number;
  /**
   * From now on nothing passes either way and new connections are accepted but not served: the
   * target looks frozen (a stopped process, a dead network path), not refused.
   */
  pause(): void;
  /** Delivers what was held back and passes traffic again. */
  resume(): void;
  /**
   * New connections go to `target` from now on (a server started again on another port), so
   * clients keep one address, the proxy's, which stays bound; with none (the server is stopped)
   * each is closed at once. Open ones end with their target.
   */
  retarget(target: { host: string; port: number } | null): void;
  close(): Promise<void>;
}

/** One direction of a connection: bytes flow at once, or are held while the proxy is paused. */
function pipe(from: net.Socket, to: net.Socket, paused: () => boolean, held: Buffer[]): void {
  from.on('data', (chunk: Buffer) => {
    if (paused()) held.push(chunk);
    else to.write(chunk);
  });
  from.on('end', () => to.end());
}

/**
 * A TCP proxy on a free port, in front of `initial`, for tests of a dependency that stops
 * answering or starts again elsewhere; with no target (yet), a connection is accepted and closed.
 * It listens on loopback, or with `everyInterface` where a server given only a port does (every
 * interface, IPv6 and IPv4), for a server whose clients reach it by `localhost`.
 */
export async function startTcpProxy(
  initial: { host: string; port: number } | null,
  options: { everyInterface?: boolean } = {},
): Promise<TcpProxy> {
  let target = initial;
  let paused = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!target) {
      client.on('error', () => undefined);
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const toUpstream: Buffer[] = [];
    const toClient: Buffer[] = [];
    const flush = () => {
      for (const chunk of toUpstream.splice(0)) upstream.write(chunk);
      for (const chunk of toClient.splice(0)) client.write(chunk);
    };
    flushes.add(flush);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        flushes.delete(flush);
        client.destroy();
        upstream.destroy();
      });
    }
    pipe(client, upstream, () => paused, toUpstream);
    pipe(upstream, client, () => paused, toClient);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (options.everyInterface) server.listen(0, listening);
    else server.listen(0, '127.0.0.1', listening);
  });
  const address = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port: address.port,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const flush of flushes) flush();
    },
    retarget(next) {
      target = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
