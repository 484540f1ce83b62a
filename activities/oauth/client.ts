import * as oauth from 'openid-client';
import type { AppDefinition } from '../../workflows/catalog/index.js';
import type { AppEndpoints } from './endpoints.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * The openid-client configuration for one app and one OAuth client. Providers such as GitHub
 * publish no discovery document, so the server metadata comes from the catalog (or an OpenAPI
 * app's accepted document, oauth-app.ts), not discovery.
 */
export function oauthConfiguration(
  app: Pick<AppDefinition, 'oauth'>,
  endpoints: AppEndpoints,
  credentials: ClientCredentials,
): oauth.Configuration {
  const server: oauth.ServerMetadata = {
    issuer: endpoints.issuer,
    authorization_endpoint: endpoints.authorizationUrl,
    token_endpoint: endpoints.tokenUrl,
    ...(endpoints.revocationUrl ? { revocation_endpoint: endpoints.revocationUrl } : {}),
  };
  const authentication =
    app.oauth.tokenEndpointAuthMethod === 'client_secret_post'
      ? oauth.ClientSecretPost(credentials.clientSecret)
      : oauth.ClientSecretBasic(credentials.clientSecret);
  const configuration = new oauth.Configuration(
    server,
    credentials.clientId,
    undefined,
    authentication,
  );
  // Plain http is only ever configured for loopback demo and test apps; the deprecation is
  // openid-client's way of making this call stand out, not a planned removal.
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  if (endpoints.tokenUrl.startsWith('http:')) oauth.allowInsecureRequests(configuration);
  return configuration;
}

/** The provider said the grant is gone (refresh token expired, revoked or reused). */
export function isInvalidGrant(error: unknown): boolean {
  return error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant';
}

export { oauth };
