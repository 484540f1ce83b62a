import type { AppDefinition } from '../types.js';

/**
 * Notion public integrations. Notion has no OAuth scopes: what the integration may do is set in
 * its capabilities, and which pages it reaches is chosen by the user on the consent screen. So
 * there is nothing to ask for or grade. Notion's `/v1/oauth/revoke` takes a JSON body and needs
 * the Notion-Version header, which an RFC 7009 request does not send: no revocation path.
 */
export const notion: AppDefinition = {
  id: 'notion',
  name: 'Notion',
  oauthBaseUrl: 'https://api.notion.com',
  apiBaseUrl: 'https://api.notion.com',
  // The version the actions are written against (data sources, `in_trash`, block `position`).
  apiHeaders: { 'Notion-Version': '2026-03-11' },
  oauth: {
    authorizationPath: '/v1/oauth/authorize',
    tokenPath: '/v1/oauth/token',
    defaultScopes: [],
    scopeGrades: {},
    scopeSeparator: ' ',
    tokenEndpointAuthMethod: 'client_secret_basic',
    pkce: false,
    defaultAccessTokenTtlSeconds: null,
    // Notion requires it: the integration is authorized by a user, not installed for a workspace.
    extraAuthorizationParams: { owner: 'user' },
  },
  // The token response names the workspace and, with `owner=user`, the user who authorized:
  // the same user in another workspace is another account.
  accountIdentity: {
    from: 'token_response',
    fields: [['workspace_id'], ['owner', 'user', 'id']],
  },
};
