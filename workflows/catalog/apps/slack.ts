import type { AppDefinition } from '../types.js';

/**
 * Slack (OAuth v2). The top-level token of `oauth.v2.access` is the bot token, so the default
 * scopes are bot scopes: the app acts as its bot user in the workspace the user installs it to.
 * `auth.revoke` takes the token being revoked as its own bearer, not RFC 7009: no revocation path.
 */
export const slack: AppDefinition = {
  id: 'slack',
  name: 'Slack',
  oauthBaseUrl: 'https://slack.com',
  apiBaseUrl: 'https://slack.com',
  oauth: {
    authorizationPath: '/oauth/v2/authorize',
    tokenPath: '/api/oauth.v2.access',
    defaultScopes: ['channels:read', 'channels:history', 'chat:write', 'reactions:write'],
    scopeGrades: {
      'channels:read': ['read'],
      'channels:history': ['read'],
      'groups:read': ['read'],
      'groups:history': ['read'],
      'reactions:read': ['read'],
      'chat:write': ['write'],
      'reactions:write': ['write'],
    },
    scopeDescriptions: {
      'channels:read': 'See the public channels of your workspace',
      'channels:history': 'Read messages in the public channels it is added to',
      'groups:read': 'See the private channels it is added to',
      'groups:history': 'Read messages in the private channels it is added to',
      'reactions:read': 'See emoji reactions to messages',
      // chat.update and chat.delete need no other scope.
      'chat:write': 'Send, edit and delete messages as the app',
      'reactions:write': 'Add and remove emoji reactions',
    },
    scopeSeparator: ',',
    // Slack asks clients to prefer HTTP Basic over form parameters for the client secret.
    tokenEndpointAuthMethod: 'client_secret_basic',
    // Enabling PKCE turns a Slack app into a public client for good; Gatehouse is confidential.
    pkce: false,
    // Without token rotation Slack tokens do not expire; with it, responses carry `expires_in`.
    defaultAccessTokenTtlSeconds: null,
  },
  // `oauth.v2.access` names the installing user in `authed_user.id`.
  accountIdentity: { from: 'token_response', fields: [['authed_user', 'id']] },
  // Web API methods answer 200 with `{ok: false, error}` when they fail.
  reportsFailure: (body) =>
    typeof body === 'object' && body !== null && (body as { ok?: unknown }).ok === false,
};
