/**
 * The app catalog is data: what Gatehouse knows of each third-party app. This half describes how
 * to connect a user (OAuth); the actions of each app live beside it. Base URLs are defaults that
 * configuration can point elsewhere (APP_URLS), e.g. at a sandbox or the local demo app.
 */
export type ScopeGrade = 'read' | 'write';

export interface OAuthSettings {
  /** Paths are relative to the app's OAuth base URL unless absolute. */
  authorizationPath: string;
  tokenPath: string;
  revocationPath?: string;
  /** Scopes requested when a connect link names none. */
  defaultScopes: string[];
  /** How each provider scope grades: a connection's `granted_scopes` are these grades. */
  scopeGrades: Record<string, ScopeGrade[]>;
  scopeSeparator: ' ' | ',';
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post';
  pkce: boolean;
  /** Used when a token response has no `expires_in`; null: the access token does not expire. */
  defaultAccessTokenTtlSeconds: number | null;
  extraAuthorizationParams?: Record<string, string>;
}

export interface AppDefinition {
  id: string;
  name: string;
  oauthBaseUrl: string;
  apiBaseUrl: string;
  oauth: OAuthSettings;
}
