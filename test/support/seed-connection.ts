import { createAuthConfig } from '../../activities/db/auth-configs.js';
import { upsertConnectedUser, type ConnectedUser } from '../../activities/db/connected-users.js';
import { saveAuthorizedConnection, type Connection } from '../../activities/db/connections.js';
import { learnAccountId } from '../../activities/oauth/account-identity.js';
import { oauth, oauthConfiguration } from '../../activities/oauth/client.js';
import { appEndpoints } from '../../activities/oauth/endpoints.js';
import { CONNECT_CALLBACK_PATH } from '../../activities/oauth/redirect-uri.js';
import { scopesFrom, tokenSetFrom } from '../../activities/oauth/token-response.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { startDemoApp, type DemoApp, type DemoClient } from '../../infra/demo-app/index.js';
import { acme } from '../../workflows/catalog/apps/acme.js';
import { gradeScopes } from '../../workflows/catalog/index.js';
import { testConfig } from './config.js';
import { consentAtDemoApp } from '../../infra/demo-app/scripted-consent.js';

export interface SeededConnection {
  user: ConnectedUser;
  connection: Connection;
  /** The demo app account that granted it (`demo.revokeGrants(account)`). */
  account: string;
  accessToken: string;
  refreshToken: string;
}

export interface SeedInput {
  environmentId: string;
  externalId: string;
  customer?: string;
  /** Demo app username; default: the external id. */
  account?: string;
}

export interface AcmeFixture {
  demo: DemoApp;
  /** A test config whose catalog app `acme` is this demo app; give the worker the same. */
  config: Config;
  /** A user with a connection to acme holding real tokens, refreshable at the demo app. */
  connect(input: SeedInput): Promise<SeededConnection>;
  stop(): Promise<void>;
}

/** The browser's part: authorize → consent form (username, allow) → redirect to the callback. */
async function grantInBrowser(
  configuration: oauth.Configuration,
  redirectUri: string,
  account: string,
): Promise<{ callbackUrl: URL; verifier: string; state: string }> {
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const url = oauth.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri,
    scope: acme.oauth.defaultScopes.join(acme.oauth.scopeSeparator),
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callbackUrl = await consentAtDemoApp(url, (next) => next.href.startsWith(redirectUri), {
    username: account,
  });
  return { callbackUrl, verifier, state };
}

/**
 * The demo app as catalog app `acme`, registered with the client an auth config of each test
 * environment uses, and a way to give users real connections to it: the code + PKCE flow is
 * driven as a browser would, and the tokens stored as the connect flow stores them.
 */
export async function startAcmeFixture(
  sql: Sql,
  databaseUrl: string,
  options: {
    accessTokenTtlSeconds?: number;
    env?: Record<string, string>;
    /** Where other catalog apps are, next to acme at the demo app (APP_URLS). */
    appUrls?: Record<string, string>;
  } = {},
): Promise<AcmeFixture> {
  const demo = await startDemoApp(
    options.accessTokenTtlSeconds ? { accessTokenTtlSeconds: options.accessTokenTtlSeconds } : {},
  );
  const config = testConfig(databaseUrl, {
    APP_URLS: JSON.stringify({ acme: demo.url, ...options.appUrls }),
    ...options.env,
  });
  const redirectUri = `${config.api.publicUrl}${CONNECT_CALLBACK_PATH}`;
  const client: DemoClient = {
    clientId: 'gatehouse-test',
    clientSecret: 'gatehouse-test-secret',
    redirectUris: [redirectUri],
  };
  try {
    await demo.registerClient(client);
  } catch (error) {
    // A fixture that failed to start leaves no demo app running behind its error.
    await demo.stop();
    throw error;
  }
  const endpoints = appEndpoints(acme, config.apps.urls);
  const configuration = oauthConfiguration(acme, endpoints, client);
  const authConfigs = new Map<string, Promise<string>>();

  function authConfigOf(environmentId: string): Promise<string> {
    let id = authConfigs.get(environmentId);
    if (!id) {
      id = createAuthConfig(sql, config.encryption, {
        environmentId,
        app: acme.id,
        name: 'demo app',
        clientId: client.clientId,
        clientSecret: client.clientSecret,
      }).then((authConfig) => authConfig.id);
      authConfigs.set(environmentId, id);
    }
    return id;
  }

  async function connect(input: SeedInput): Promise<SeededConnection> {
    const account = input.account ?? input.externalId;
    const authConfigId = await authConfigOf(input.environmentId);
    const { callbackUrl, verifier, state } = await grantInBrowser(
      configuration,
      redirectUri,
      account,
    );
    const response = await oauth.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const tokens = tokenSetFrom(acme, response, new Date());
    if (!tokens.refreshToken) throw new Error('the demo app issued no refresh token');
    const providerScopes = scopesFrom(acme, response, acme.oauth.defaultScopes);
    const user = await upsertConnectedUser(
      sql,
      input.environmentId,
      input.externalId,
      input.customer,
    );
    const connection = await saveAuthorizedConnection(sql, config.encryption, {
      environmentId: input.environmentId,
      connectedUserId: user.id,
      app: acme.id,
      authConfigId,
      tokens,
      grantedScopes: gradeScopes(acme, providerScopes),
      providerScopes,
      // As the connect flow learns it, so that reconnects of seeded connections are checked too.
      accountId: await learnAccountId(acme, response, endpoints.apiBaseUrl),
    });
    return {
      user,
      connection,
      account,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
    };
  }

  return { demo, config, connect, stop: () => demo.stop() };
}
