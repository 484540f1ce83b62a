import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientMetadata, Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import { demoClientSchema, type AdminControls } from './admin-api.js';
import { DemoFaults } from './faults.js';
import { OidcStore } from './file-adapter.js';
import { buildHttpApp } from './http-app.js';
import { createProvider } from './provider.js';
import { loadOrCreateSecrets } from './secrets.js';
import { StatsCounter, type DemoStats } from './stats.js';
import { Store } from './store.js';

export type { DemoStats } from './stats.js';
export type { DemoFaults, FaultMode, FaultSettings, FaultState } from './faults.js';
export { SUPPORTED_SCOPES } from './provider.js';

export interface DemoAppOptions {
  /** 0 or undefined: a random free port. */
  port?: number;
  /**
   * A server already listening, used instead of binding `port`: `gatehouse dev` binds the port
   * when it chooses it, so no other program can take it while the rest starts.
   */
  server?: Server;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 3600. */
  accessTokenTtlSeconds?: number;
  /** OAuth clients registered at start. */
  clients?: DemoClient[];
  /** When set, all state persists in JSON files there and survives a restart. */
  dataDir?: string;
  logger?: Logger;
}

export interface DemoClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface DemoApp {
  /** The issuer, e.g. http://127.0.0.1:54321 (no trailing slash). */
  url: string;
  stop(): Promise<void>;
  /** Adds or replaces a client. */
  registerClient(client: DemoClient): Promise<void>;
  stats(): DemoStats;
  resetStats(): void;
  /** The same switches as POST/DELETE /__admin/faults. */
  faults: DemoFaults;
  /** Revokes every grant of the account with its tokens; resolves to the number of grants. */
  revokeGrants(account: string): Promise<number>;
  /** Applies to access tokens issued from now on. */
  setAccessTokenTtl(seconds: number): void;
  /** Token answers from now on say this `expires_in` (raw JSON text); null: the true one. */
  setTokenExpiresIn(raw: string | null): void;
}

/** oidc-provider's default clockTolerance; stored records are kept that much past expiry. */
const CLOCK_TOLERANCE_SECONDS = 15;

export async function startDemoApp(options: DemoAppOptions = {}): Promise<DemoApp> {
  const host = options.host ?? '127.0.0.1';
  const store = await Store.open(options.dataDir);
  const oidcStore = new OidcStore(store, CLOCK_TOLERANCE_SECONDS);
  const stats = new StatsCounter();
  const faults = new DemoFaults();
  const stopping = new AbortController();
  let accessTokenTtlSeconds = positiveSeconds(options.accessTokenTtlSeconds ?? 3600);
  let tokenExpiresIn: string | null = null;

  // The issuer contains the port, so the server must listen before the provider exists.
  const server = options.server ?? createServer();
  const port = options.server
    ? (options.server.address() as AddressInfo).port
    : await listen(server, options.port ?? 0, host);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  try {
    const provider = await createProvider({
      issuer: url,
      oidcStore,
      secrets: await loadOrCreateSecrets(store),
      accessTokenTtlSeconds: () => accessTokenTtlSeconds,
      tokenExpiresIn: () => tokenExpiresIn,
      stats,
      logger: options.logger,
    });
    const controls: AdminControls = {
      faults,
      stats,
      revokeGrants: (account) => oidcStore.revokeGrantsOf(account),
      setAccessTokenTtl: (seconds) => {
        accessTokenTtlSeconds = positiveSeconds(seconds);
      },
      setTokenExpiresIn: (raw) => {
        tokenExpiresIn = raw === null ? null : jsonText(raw);
      },
      registerClient: (client) => registerClient(provider, oidcStore, client),
    };
    for (const client of options.clients ?? []) await controls.registerClient(client);

    const logger = options.logger;
    server.on(
      'request',
      buildHttpApp({
        baseUrl: url,
        provider,
        store,
        controls,
        stopping: stopping.signal,
        logger,
      }),
    );

    return {
      url,
      stop: async () => {
        stopping.abort();
        await close(server);
        await store.flush();
      },
      registerClient: controls.registerClient,
      stats: () => stats.snapshot(),
      resetStats: () => {
        stats.reset();
      },
      faults,
      revokeGrants: controls.revokeGrants,
      setAccessTokenTtl: controls.setAccessTokenTtl,
      setTokenExpiresIn: controls.setTokenExpiresIn,
    };
  } catch (error) {
    await close(server);
    throw error;
  }
}

/** Clients live in the adapter (not the static `clients` option) so they can change at runtime. */
async function registerClient(
  provider: Provider,
  oidcStore: OidcStore,
  client: DemoClient,
): Promise<void> {
  const parsed = demoClientSchema.parse(client);
  const metadata: ClientMetadata = {
    client_id: parsed.clientId,
    client_secret: parsed.clientSecret,
    redirect_uris: parsed.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    // oidc-provider accepts client_secret_post as well for clients registered with basic.
    token_endpoint_auth_method: 'client_secret_basic',
  };
  await provider.Client.validate(metadata);
  await oidcStore.adapterFor('Client').upsert(parsed.clientId, metadata);
}

function positiveSeconds(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`accessTokenTtlSeconds must be a positive integer, got ${value}`);
  }
  return value;
}

/** Raw text spliced into a JSON answer must be one JSON value, or the answer is not JSON. */
function jsonText(raw: string): string {
  try {
    JSON.parse(raw);
  } catch {
    throw new RangeError(`expires_in must be JSON text, got ${raw}`);
  }
  return raw.trim();
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
    server.close(() => {
      resolve();
    });
    server.closeAllConnections();
  });
}
