import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import type { TestKey } from './keys.js';

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

/**
 * A receiver set as the webhook endpoint of a call stack's environment (approval webhooks are
 * delivered, and their workflows started, only where one is set), with its signing secret.
 */
export async function receiveWebhooks(stack: {
  request: (
    key: TestKey,
    method: string,
    path: string,
    options: { body: unknown },
  ) => Promise<{ status: number; body: unknown }>;
  key: TestKey;
}): Promise<{ receiver: Receiver; secret: string }> {
  const receiver = await startReceiver();
  const secret = generateWebhookSecret();
  const set = await stack.request(stack.key, 'PUT', '/v1/webhook-endpoint', {
    body: { url: receiver.url, secret },
  });
  if (set.status !== 200) {
    await receiver.close();
    throw new Error(`setting the webhook endpoint failed: ${JSON.stringify(set.body)}`);
  }
  return { receiver, secret };
}
