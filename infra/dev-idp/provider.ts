import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type {
  ClientMetadata,
  Configuration,
  Grant,
  GrantLookupContext,
  Provider,
} from 'oidc-provider';
import type { Logger } from 'pino';
import { OidcStore } from '../demo-app/file-adapter.js';
import { Store } from '../demo-app/store.js';
import type { DevAccount } from './accounts.js';
import { errorPage } from './sign-in-page.js';
import { loadProviderClass } from '../oidc-provider-class.js';

/** The scopes a relying party may ask for, and the claims each releases. */
export const CLAIMS = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name'],
  groups: ['groups'],
} as const satisfies Record<string, readonly string[]>;

export const SCOPES = Object.keys(CLAIMS) as (keyof typeof CLAIMS)[];

/** oidc-provider's default clock tolerance; stored records are kept that much past expiry. */
const CLOCK_TOLERANCE_SECONDS = 15;

/** A registered client of the provider, in OAuth's own spelling. */
export interface DevClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface ProviderSetup {
  issuer: string;
  clients: readonly DevClient[];
  accounts: readonly DevAccount[];
  logger: Logger | undefined;
}

export async function createProvider(setup: ProviderSetup): Promise<Provider> {
  const ProviderClass = await loadProviderClass(setup.logger);
  const store = new OidcStore(await Store.open(), CLOCK_TOLERANCE_SECONDS);
  const provider = new ProviderClass(setup.issuer, configuration(setup, store));
  provider.on('server_error', (_ctx, error) => {
    setup.logger?.error({ err: error }, 'dev sign-in provider: server error');
  });
  for (const event of ['grant.error', 'authorization.error']) {
    provider.on(event, (_ctx, error) => {
      setup.logger?.debug({ err: error, event }, 'dev sign-in provider: request refused');
    });
  }
  return provider;
}

function configuration(setup: ProviderSetup, store: OidcStore): Configuration {
  const accounts = new Map(setup.accounts.map((account) => [account.sub, account]));
  return {
    // The demo app's adapter, in memory: oidc-provider's own warns on every start. A restart
    // forgets the provider's sessions and codes, which a dev provider may.
    adapter: store.adapterFor,
    clients: setup.clients.map((client): ClientMetadata => ({
      ...client,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      // oidc-provider takes client_secret_post from a client registered with basic as well.
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    scopes: [...SCOPES],
    claims: Object.fromEntries(
      Object.entries(CLAIMS).map(([scope, claims]) => [scope, [...claims]]),
    ),
    // A relying party reads who signed in from the ID token alone (no userinfo request).
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    // S256 is the only method oidc-provider 9 knows; `plain` is refused as unsupported.
    pkce: { required: () => true },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      const claims = {
        sub: account.sub,
        email: account.email,
        email_verified: true,
        name: account.name,
        groups: [...account.groups],
      };
      return { accountId: account.sub, claims: () => claims };
    },
    loadExistingGrant: grantFirstPartyClient,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: {
      // Random per start: a restart signs everyone out of the provider, which costs a sign-in.
      keys: [randomBytes(32).toString('base64url')],
      // Cookies ignore ports, and the demo app and Gatehouse's console set theirs on 127.0.0.1 too.
      names: {
        session: 'gatehouse_dev_idp_session',
        interaction: 'gatehouse_dev_idp_interaction',
        resume: 'gatehouse_dev_idp_resume',
      },
    },
    jwks: { keys: [signingKey()] },
    clientBasedCORS: () => false,
    features: {
      devInteractions: { enabled: false },
      // The console may end the provider's session when a person signs out.
      rpInitiatedLogout: { enabled: true },
      revocation: { enabled: false },
      introspection: { enabled: false },
    },
    ttl: {
      AuthorizationCode: 60,
      AccessToken: 60 * 60,
      IdToken: 60 * 60,
      Interaction: 60 * 60,
      Session: 8 * 60 * 60,
      Grant: 8 * 60 * 60,
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(out['error'] ?? 'error', out['error_description'] ?? '');
    },
  };
}

/**
 * Consent is skipped: every client of this provider is Gatehouse's own console, so the person
 * who signed in grants it the scopes and claims it asks for without being asked. The grant of
 * an earlier sign-in is widened to this request's; one of another person is never reused.
 */
async function grantFirstPartyClient(ctx: GrantLookupContext): Promise<Grant | undefined> {
  const { provider, client, account, session, result } = ctx.oidc;
  if (!client || !account) return undefined;
  const grantId = result?.consent?.grantId ?? session?.grantIdFor(client.clientId);
  const existing = grantId ? await provider.Grant.find(grantId) : undefined;
  const grant =
    existing?.accountId === account.accountId && existing.clientId === client.clientId
      ? existing
      : new provider.Grant({ accountId: account.accountId, clientId: client.clientId });
  const scopes = [...ctx.oidc.requestParamOIDCScopes];
  if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
  if (ctx.oidc.requestParamClaims.size > 0) grant.addOIDCClaims([...ctx.oidc.requestParamClaims]);
  await grant.save();
  return grant;
}

/** The ID tokens' key, made at each start: nothing secret is committed or kept on disk. */
function signingKey(): Record<string, unknown> {
  // RS256: oidc-provider's default id_token_signed_response_alg, and every client library's.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...privateKey.export({ format: 'jwk' }),
    kid: randomBytes(8).toString('hex'),
    use: 'sig',
    alg: 'RS256',
  };
}
