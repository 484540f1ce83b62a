import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import { createOAuthAttempt, storedBinding, type BrowserBinding } from '../db/oauth-attempts.js';
import { oauth, type ClientCredentials } from './client.js';
import { configurationFor, type OAuthApp } from './oauth-app.js';
import { connectRedirectUri } from './redirect-uri.js';

/** How long a user may spend at the app's consent page before the callback is refused. */
export const ATTEMPT_TTL_SECONDS = 15 * 60;

/**
 * Records a new attempt (state and PKCE verifier, the verifier sealed; the hash of the secret the
 * starting browser gets as a cookie) and returns the app's authorize URL that browser is sent to.
 */
export async function startAuthorization(
  sql: Db,
  config: Pick<Config, 'api' | 'encryption' | 'mcpApps'>,
  input: {
    linkId: string;
    app: OAuthApp;
    credentials: ClientCredentials;
    browser: BrowserBinding;
  },
): Promise<URL> {
  const { app } = input;
  const state = oauth.randomState();
  const codeVerifier = oauth.randomPKCECodeVerifier();
  await createOAuthAttempt(sql, config.encryption, {
    linkId: input.linkId,
    state,
    codeVerifier,
    browser: storedBinding(input.browser),
    ttlSeconds: ATTEMPT_TTL_SECONDS,
  });
  const configuration = configurationFor(app, input.credentials, config);
  return oauth.buildAuthorizationUrl(configuration, {
    redirect_uri: connectRedirectUri(config.api),
    // Some apps (Notion) grant access by capability, not by scope: send none rather than empty.
    ...(app.oauth.defaultScopes.length > 0
      ? { scope: app.oauth.defaultScopes.join(app.oauth.scopeSeparator) }
      : {}),
    state,
    ...(app.oauth.pkce
      ? {
          code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
          code_challenge_method: 'S256',
        }
      : {}),
    ...app.oauth.extraAuthorizationParams,
  });
}
