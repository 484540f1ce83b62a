import type { Logger } from 'pino';
import type { Configuration, KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { OidcStore } from './file-adapter.js';
import type { ProviderSecrets } from './secrets.js';
import type { StatsCounter } from './stats.js';
import { escapeHtml, page } from './html.js';
import { loadProviderClass } from '../oidc-provider-class.js';

/** Every scope the app knows. No scope is mandatory: `openid` is optional (plain OAuth 2.0). */
export const SUPPORTED_SCOPES = ['tasks:read', 'tasks:write', 'offline_access', 'openid'] as const;

const DAY = 24 * 60 * 60;

export interface ProviderSetup {
  issuer: string;
  oidcStore: OidcStore;
  secrets: ProviderSecrets;
  /** Read on every issuance, so the TTL can be changed while the app runs. */
  accessTokenTtlSeconds: () => number;
  /**
   * `expires_in` of token answers as raw JSON text, sent in place of the true one; null: the
   * true one. A fault for clients: the tokens themselves live as long as ever.
   */
  tokenExpiresIn: () => string | null;
  stats: StatsCounter;
  logger: Logger | undefined;
}

export async function createProvider(setup: ProviderSetup): Promise<Provider> {
  const ProviderClass = await loadProviderClass(setup.logger);
  const provider = new ProviderClass(setup.issuer, configuration(setup));

  // Wraps the provider's own handling, so rejected token requests are counted as well.
  provider.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      countRequest(ctx, setup.stats);
    }
  });

  // Registered after the counter, so it runs inside it and rewrites the body before it is sent.
  provider.use(async (ctx, next) => {
    await next();
    const raw = setup.tokenExpiresIn();
    if (raw === null || ctx.oidc?.route !== 'token' || ctx.status !== 200) return;
    const answer = { ...(ctx.body as Record<string, unknown>), expires_in: undefined };
    // Spliced as text: JSON.stringify would write 1e+308 for 1e308 and round a long integer.
    ctx.body = `${JSON.stringify(answer).slice(0, -1)},"expires_in":${raw}}`;
    ctx.type = 'application/json';
  });

  provider.on('server_error', (_ctx, error) => {
    if (setup.logger) setup.logger.error({ err: error }, 'oidc-provider server error');
    else console.error('demo-app: oidc-provider server error', error);
  });
  for (const event of ['grant.error', 'authorization.error', 'revocation.error']) {
    provider.on(event, (_ctx, error) => {
      setup.logger?.debug({ err: error, event }, 'oauth request rejected');
    });
  }
  return provider;
}

function countRequest(ctx: KoaContextWithOIDC, stats: StatsCounter): void {
  if (ctx.method !== 'POST') return;
  if (ctx.oidc?.route === 'token') stats.countTokenRequest(ctx.oidc.params?.['grant_type']);
  if (ctx.oidc?.route === 'revocation') stats.countRevocation();
}

function configuration(setup: ProviderSetup): Configuration {
  return {
    adapter: setup.oidcStore.adapterFor,
    // Scopes are registered as provider-level ("OIDC") scopes rather than resource-server scopes,
    // so clients need neither `openid` nor a `resource` parameter, like GitHub or Linear.
    scopes: [...SUPPORTED_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    // Always issue a refresh token to clients allowed the refresh_token grant, whether or not
    // they asked for offline_access (the default ties it to offline_access).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Tokens outlive the browser session: the client, not the user's cookie, holds them.
    expiresWithSession: () => false,
    rotateRefreshToken: true,
    cookies: {
      keys: setup.secrets.cookieKeys,
      // Cookies ignore ports, so generic names would clash with other apps on 127.0.0.1.
      names: {
        session: 'acme_session',
        interaction: 'acme_interaction',
        resume: 'acme_interaction_resume',
      },
    },
    jwks: setup.secrets.jwks,
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    clientBasedCORS: () => false,
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: { enabled: false },
      // /me belongs to the resource API.
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      dPoP: { enabled: false },
      revocation: {
        enabled: true,
        allowedPolicy: (
          _ctx: unknown,
          client: { clientId: string },
          token: { clientId?: string },
        ) => token.clientId === client.clientId,
      },
    },
    ttl: {
      AccessToken: () => setup.accessTokenTtlSeconds(),
      AuthorizationCode: 60,
      IdToken: 60 * 60,
      RefreshToken: 30 * DAY,
      Grant: 365 * DAY,
      Session: 14 * DAY,
      Interaction: 60 * 60,
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = page(
        'Something went wrong',
        `<h2>Something went wrong</h2>
        <p><strong>${escapeHtml(out['error'] ?? 'error')}</strong></p>
        <p>${escapeHtml(out['error_description'] ?? '')}</p>`,
      );
    },
  };
}
