import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

/** A real webhook receiver on loopback, answering each POST with the next scripted status. */
export interface Receiver {
  url: string;
  deliveries: Delivery[];
  answer(statuses: number[]): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let script: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      deliveries.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = script.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/gatehouse`,
    deliveries,
    answer(statuses) {
      script = [...statuses];
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}

/**
 * The deliveries of one event (by `webhook-id`), once there are at least `count`: deliveries
 * are made by a worker, so they are waited for, with a budget for a loaded machine and for
 * Temporal's retry backoff.
 */
export async function deliveriesOf(
  receiver: Receiver,
  webhookId: string,
  count = 1,
  budgetMs = 90_000,
): Promise<Delivery[]> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const found = receiver.deliveries.filter((d) => d.headers['webhook-id'] === webhookId);
    if (found.length >= count) return found;
    if (Date.now() > deadline) {
      throw new Error(`${String(found.length)} of ${String(count)} deliveries of ${webhookId}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
