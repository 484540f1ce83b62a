import type { AppDefinition } from '../types.js';

/**
 * Linear. Every app is on refresh tokens since April 2026: access tokens are short-lived and the
 * token response says how long (`expires_in`); the default below only covers a response without it.
 */
export const linear: AppDefinition = {
  id: 'linear',
  name: 'Linear',
  oauthBaseUrl: 'https://linear.app',
  apiBaseUrl: 'https://api.linear.app',
  oauth: {
    authorizationPath: '/oauth/authorize',
    tokenPath: 'https://api.linear.app/oauth/token',
    revocationPath: 'https://api.linear.app/oauth/revoke',
    defaultScopes: ['read', 'write'],
    scopeGrades: {
      read: ['read'],
      write: ['write'],
      'issues:create': ['write'],
      'comments:create': ['write'],
    },
    scopeDescriptions: {
      read: 'See the issues, projects and comments of your workspace',
      write: 'Create, change, archive and delete issues, projects and comments as you',
      'issues:create': 'Create issues',
      'comments:create': 'Write comments',
    },
    // Asked for comma-separated; granted scopes come back space-separated, which the ','
    // setting also splits.
    scopeSeparator: ',',
    tokenEndpointAuthMethod: 'client_secret_post',
    pkce: true,
    defaultAccessTokenTtlSeconds: 86_400,
  },
  // The GraphQL `viewer` is the user the token acts for; its `id` is a UUID.
  accountIdentity: {
    from: 'api',
    request: { method: 'POST', path: '/graphql', body: { query: '{ viewer { id } }' } },
    fields: [['data', 'viewer', 'id']],
  },
  // GraphQL answers 200 with `errors` when an operation fails, wholly or in part.
  reportsFailure: (body) =>
    typeof body === 'object' &&
    body !== null &&
    Array.isArray((body as { errors?: unknown }).errors) &&
    (body as { errors: unknown[] }).errors.length > 0,
};
