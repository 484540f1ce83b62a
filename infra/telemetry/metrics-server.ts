import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './metrics.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A process's Prometheus endpoint, `GET /metrics` on its own address (METRICS_ADDRESS), apart
 * from the API's port: nothing on it needs a key, so it is bound where only Prometheus reaches
 * it (loopback or a private interface). `more` adds text in the same format to each scrape: the
 * worker's Temporal runtime metrics.
 */
export async function startMetricsServer(
  address: { host: string; port: number },
  more?: () => Promise<string>,
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void (async () => {
      try {
        const [own, extra] = await Promise.all([registry.metrics(), more?.() ?? '']);
        res.writeHead(200, { 'content-type': registry.contentType }).end(`${own}\n${extra}`);
      } catch {
        res.writeHead(500).end();
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${String(port)}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
