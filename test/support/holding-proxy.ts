import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of an app that a test can make hold requests: held ones are neither
 * forwarded nor answered until `release()`, so the app looks as if it were thinking for as long
 * as the test needs, with no sleep. Its target may be set after it started (the app's URL is
 * often known only once a stack that needs the proxy's URL is up).
 */
export interface HoldingProxy {
  url: string;
  target: string | null;
  /** Requests `matches` accepts are held from now on; null forwards everything. */
  holding: ((request: http.IncomingMessage) => boolean) | null;
  /** Resolves when a request is held (at once if one is held already). */
  held(): Promise<void>;
  /** Forwards every held request and stops holding. */
  release(): void;
  close(): Promise<void>;
}

export async function startHoldingProxy(): Promise<HoldingProxy> {
  const waiting: (() => void)[] = [];
  const heldRequests: (() => void)[] = [];
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    if (proxy.target === null) {
      res.writeHead(502).end();
      return;
    }
    const target = new URL(proxy.target);
    const out = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => out.destroy());
    out.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (proxy.holding?.(req)) {
        heldRequests.push(() => {
          forward(req, res, body);
        });
        for (const wake of waiting.splice(0)) wake();
        return;
      }
      forward(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: HoldingProxy = {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    target: null,
    holding: null,
    held() {
      if (heldRequests.length > 0) return Promise.resolve();
      return new Promise((resolve) => waiting.push(resolve));
    },
    release() {
      proxy.holding = null;
      for (const send of heldRequests.splice(0)) send();
    },
    close() {
      proxy.release();
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      });
    },
  };
  return proxy;
}
