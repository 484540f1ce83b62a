import type { Server } from 'node:http';
import { createApp, type ApiDeps } from './app.js';

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** Starts listening; `close` stops taking requests and waits for those in flight. */
export async function startApiServer(
  deps: ApiDeps,
  port = deps.config.api.port,
): Promise<RunningApi> {
  const app = createApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, deps.config.api.host, (error?: Error) => {
      if (error) reject(error);
      else resolve(s);
    });
  });
  const address = server.address();
  const boundPort = address && typeof address === 'object' ? address.port : port;
  return {
    url: `http://${deps.config.api.host}:${boundPort}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
