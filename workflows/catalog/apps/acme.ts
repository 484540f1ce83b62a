import type { AppDefinition } from '../types.js';

/**
 * Acme Tasks: the demo app of infra/demo-app (an oidc-provider authorization server plus a task
 * API). Both halves share one origin; `gatehouse dev` and the tests point APP_URLS at it.
 */
export const acme: AppDefinition = {
  id: 'acme',
  name: 'Acme Tasks',
  oauthBaseUrl: 'http://127.0.0.1:4010',
  apiBaseUrl: 'http://127.0.0.1:4010',
  oauth: {
    authorizationPath: '/auth',
    tokenPath: '/token',
    revocationPath: '/token/revocation',
    // `openid` brings an ID token naming the account (checked by openid-client), so a reconnect
    // can be held to the account it renews.
    defaultScopes: ['openid', 'tasks:read', 'tasks:write'],
    scopeGrades: { openid: [], 'tasks:read': ['read'], 'tasks:write': ['write'] },
    scopeDescriptions: {
      openid: 'Know which account you signed in with',
      'tasks:read': 'See your tasks',
      // As the demo app's consent page says: the write scope deletes too (DELETE /tasks/:id).
      'tasks:write': 'Create, change and delete your tasks',
    },
    scopeSeparator: ' ',
    tokenEndpointAuthMethod: 'client_secret_basic',
    pkce: true,
    defaultAccessTokenTtlSeconds: 3600,
  },
  // oidc-provider's `sub` is the demo account's name, which `GET /me` also answers.
  accountIdentity: { from: 'id_token' },
};
