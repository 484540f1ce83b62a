import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { accountsSchema, DEV_ACCOUNTS, type DevAccount } from './accounts.js';
import { createProvider, type DevClient } from './provider.js';
import { signInRouter } from './sign-in-page.js';

export { DEV_ACCOUNTS, DEV_PASSWORD, type DevAccount } from './accounts.js';
export { CLAIMS, SCOPES, type DevClient } from './provider.js';
export { PROVIDER_NAME } from './sign-in-page.js';

export interface DevIdentityProviderOptions {
  /** 0 or undefined: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * A server already listening, used instead of binding `port`: `gatehouse dev` binds the port
   * when it chooses it, so no other program can take it while the rest starts.
   */
  server?: Server;
  /** The relying parties (Gatehouse's console), each signed in without a consent page. */
  clients: readonly DevClient[];
  /** Who may sign in; default DEV_ACCOUNTS. Every account's password is DEV_PASSWORD. */
  accounts?: readonly DevAccount[];
  logger?: Logger;
}

export interface DevIdentityProvider {
  /** The issuer, e.g. http://127.0.0.1:4011 (no trailing slash): discovery is below it. */
  issuer: string;
  accounts: readonly DevAccount[];
  close(): Promise<void>;
}

const clientSchema = z.strictObject({
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  redirect_uris: z.array(z.url({ protocol: /^https?$/ })).min(1),
});

/**
 * "Gatehouse dev sign-in": a real OpenID Connect provider (oidc-provider) for people to sign in
 * to Gatehouse's console with, in development and tests. Authorization code with PKCE (S256)
 * only; `openid email profile groups`, with `email_verified: true` and the `groups` claim in the
 * ID token; a plain sign-in form with one shared, printed password; no consent page.
 */
export async function startDevIdentityProvider(
  options: DevIdentityProviderOptions,
): Promise<DevIdentityProvider> {
  const clients = z.array(clientSchema).min(1).parse(options.clients);
  const accounts = accountsSchema.parse(options.accounts ?? DEV_ACCOUNTS);
  const host = options.host ?? '127.0.0.1';
  // The issuer holds the port, so the server listens before the provider exists.
  const server = options.server ?? createServer();
  const port = options.server
    ? (options.server.address() as AddressInfo).port
    : await listen(server, options.port ?? 0, host);
  const issuer = `http://${host.includes(':') ? `[${host}]` : host}:${String(port)}`;
  try {
    const provider = await createProvider({ issuer, clients, accounts, logger: options.logger });
    const app = express();
    app.disable('x-powered-by');
    app.use(signInRouter(provider, accounts));
    // oidc-provider parses its own request bodies, so no body parser may run before it.
    const oidc = provider.callback();
    app.use((req, res, next) => {
      oidc(req, res).catch(next);
    });
    app.use(errorHandler(options.logger));
    server.on('request', app);
    return { issuer, accounts, close: () => close(server) };
  } catch (error) {
    await close(server);
    throw error;
  }
}

function errorHandler(logger: Logger | undefined): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    logger?.error({ err: error }, 'dev sign-in provider: request failed');
    if (res.headersSent) res.destroy();
    else res.status(500).type('text').send('server error');
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => {
      resolve();
    });
    server.closeAllConnections();
  });
}
