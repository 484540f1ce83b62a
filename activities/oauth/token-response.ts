import type { AppDefinition } from '../../workflows/catalog/index.js';
import type { TokenSet } from '../db/connections.js';
import type { oauth } from './client.js';
import { accessTokenExpiresAt } from './token-lifetime.js';

type TokenResponse = oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers;

/**
 * A token endpoint's answer as we store it; apps that omit `expires_in` get the catalog's
 * default. `now` is taken before the request, so the expiry errs early. openid-client has already
 * refused an `expires_in` that is negative or no number.
 */
export function tokenSetFrom(
  app: Pick<AppDefinition, 'oauth'>,
  response: TokenResponse,
  now: Date,
): TokenSet {
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? null,
    expiresAt: accessTokenExpiresAt(
      response.expires_in,
      now,
      app.oauth.defaultAccessTokenTtlSeconds,
    ),
  };
}

/** Provider scopes from a token response (`scope` may be absent: then what was asked for). */
export function scopesFrom(
  app: Pick<AppDefinition, 'oauth'>,
  response: TokenResponse,
  requested: string[],
): string[] {
  if (typeof response.scope !== 'string') return requested;
  return response.scope.split(app.oauth.scopeSeparator === ',' ? /[,\s]+/ : /\s+/).filter(Boolean);
}
