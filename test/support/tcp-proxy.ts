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

/** A loopback TCP proxy in front of `target`, for tests of a dependency that stops answering. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let paused = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
