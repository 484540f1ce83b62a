import type { AppDefinition } from '../types.js';

/** Gmail (API v1) through Google's OAuth 2.0 web-server flow. */
export const gmail: AppDefinition = {
  id: 'gmail',
  name: 'Gmail',
  oauthBaseUrl: 'https://accounts.google.com',
  apiBaseUrl: 'https://gmail.googleapis.com',
  oauth: {
    authorizationPath: '/o/oauth2/v2/auth',
    tokenPath: 'https://oauth2.googleapis.com/token',
    revocationPath: 'https://oauth2.googleapis.com/revoke',
    // One scope covers reading, sending, drafts, labels and trash; only permanent deletion
    // (which no action here does) needs the full https://mail.google.com/ scope.
    defaultScopes: ['https://www.googleapis.com/auth/gmail.modify'],
    scopeGrades: {
      'https://www.googleapis.com/auth/gmail.modify': ['read', 'write'],
      'https://www.googleapis.com/auth/gmail.readonly': ['read'],
      'https://www.googleapis.com/auth/gmail.compose': ['read', 'write'],
      'https://www.googleapis.com/auth/gmail.send': ['write'],
      'https://www.googleapis.com/auth/gmail.labels': ['read', 'write'],
      'https://mail.google.com/': ['read', 'write'],
    },
    scopeDescriptions: {
      'https://www.googleapis.com/auth/gmail.modify':
        'Read, write, send, label and trash your email, but not delete it for good',
      'https://www.googleapis.com/auth/gmail.readonly': 'Read your email and its settings',
      'https://www.googleapis.com/auth/gmail.compose':
        'Write, change and delete drafts, and send email',
      'https://www.googleapis.com/auth/gmail.send': 'Send email as you',
      'https://www.googleapis.com/auth/gmail.labels':
        'See, create, change and delete your email labels',
      'https://mail.google.com/': 'Read, write, send and delete all your email for good',
    },
    scopeSeparator: ' ',
    tokenEndpointAuthMethod: 'client_secret_post',
    pkce: true,
    defaultAccessTokenTtlSeconds: 3600,
    // Google issues a refresh token only for offline access, and again only on renewed consent.
    extraAuthorizationParams: { access_type: 'offline', prompt: 'consent' },
  },
  // No accountIdentity: Google's stable account id is the OpenID `sub`, which takes the `openid`
  // scope, and Google documents ID tokens with the legacy issuer `accounts.google.com`, which
  // openid-client would refuse against this entry's; e-mail addresses can change. Reconnects
  // are therefore not checked for the account (README, "Decisions recorded").
};
