import type { AppDefinition } from '../types.js';

/** Google Calendar (API v3) through Google's OAuth 2.0 web-server flow. */
export const googleCalendar: AppDefinition = {
  id: 'google-calendar',
  name: 'Google Calendar',
  oauthBaseUrl: 'https://accounts.google.com',
  apiBaseUrl: 'https://www.googleapis.com',
  oauth: {
    authorizationPath: '/o/oauth2/v2/auth',
    tokenPath: 'https://oauth2.googleapis.com/token',
    revocationPath: 'https://oauth2.googleapis.com/revoke',
    defaultScopes: [
      'https://www.googleapis.com/auth/calendar.calendarlist.readonly',
      'https://www.googleapis.com/auth/calendar.events',
    ],
    scopeGrades: {
      'https://www.googleapis.com/auth/calendar.calendarlist.readonly': ['read'],
      'https://www.googleapis.com/auth/calendar.events': ['read', 'write'],
      'https://www.googleapis.com/auth/calendar.events.readonly': ['read'],
      'https://www.googleapis.com/auth/calendar.readonly': ['read'],
      'https://www.googleapis.com/auth/calendar': ['read', 'write'],
    },
    scopeDescriptions: {
      'https://www.googleapis.com/auth/calendar.calendarlist.readonly':
        'See the list of calendars you use',
      'https://www.googleapis.com/auth/calendar.events':
        'See, create, change and delete events on your calendars',
      'https://www.googleapis.com/auth/calendar.events.readonly': 'See events on your calendars',
      'https://www.googleapis.com/auth/calendar.readonly': 'See your calendars and their events',
      'https://www.googleapis.com/auth/calendar':
        'See, change, share and delete your calendars and their events',
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
