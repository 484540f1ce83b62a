import type { AppDefinition } from '../types.js';

/**
 * GitHub through an OAuth app: its user tokens carry classic scopes and do not expire. GitHub
 * revokes grants through `DELETE /applications/{client_id}/grant`, not RFC 7009, so there is no
 * revocation path here.
 */
export const github: AppDefinition = {
  id: 'github',
  name: 'GitHub',
  oauthBaseUrl: 'https://github.com',
  apiBaseUrl: 'https://api.github.com',
  apiHeaders: { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' },
  oauth: {
    authorizationPath: '/login/oauth/authorize',
    tokenPath: '/login/oauth/access_token',
    // `repo` is the narrowest classic scope that reaches private repositories' issues.
    defaultScopes: ['repo'],
    scopeGrades: {
      repo: ['read', 'write'],
      public_repo: ['read', 'write'],
      'read:user': ['read'],
    },
    scopeDescriptions: {
      // Full control of repositories' contents (deleting a comment, a branch, a file), not of
      // the repositories themselves (that is `delete_repo`).
      repo: 'See, change and delete code, issues and pull requests in all your repositories',
      public_repo:
        'See, change and delete code, issues and pull requests in your public repositories',
      'read:user': 'See your profile',
    },
    // The token response lists granted scopes comma-separated ("repo,gist"); the authorize URL
    // takes a single scope as is.
    scopeSeparator: ',',
    tokenEndpointAuthMethod: 'client_secret_post',
    // Supported (S256 only) since July 2025.
    pkce: true,
    defaultAccessTokenTtlSeconds: null,
  },
  // `GET /user` answers any user token, whatever its scopes; `id` is numeric and never reused,
  // unlike `login`, which the user can rename.
  accountIdentity: { from: 'api', request: { method: 'GET', path: '/user' }, fields: [['id']] },
};
