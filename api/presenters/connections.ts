import { z } from 'zod';
import type { Connection, TokenSet } from '../../activities/db/connections.js';
import type { StoredCredential } from '../../activities/db/credential-connections.js';
import type { LinkView } from '../connect/links.js';
import { iso, optionalTimestamp, timestamp } from './timestamps.js';

const status = z.enum(['active', 'expired', 'revoked']).meta({
  description: '`expired`: the refresh token is dead; reconnect through a reconnect link',
});
const authKind = z.enum(['oauth2', 'credential']).meta({
  description:
    '`oauth2`: tokens from the app’s OAuth grant; `credential`: an API key, bearer token or username and password the user entered on the connect page',
});
const grantedScopes = z
  .array(z.string())
  .meta({ description: 'Grades the grant allows (`read`, `write`), from the app’s own scopes' });

export const connectionListItemSchema = z
  .object({
    id: z.string(),
    app: z.string(),
    status,
    auth_kind: authKind,
    granted_scopes: grantedScopes,
    last_used_at: optionalTimestamp,
    last_refreshed_at: optionalTimestamp,
  })
  .meta({ id: 'ConnectionListItem' });

export const connectionSchema = z
  .object({
    id: z.string(),
    connected_user_id: z.string().meta({ description: 'The `id` of the connected user' }),
    app: z.string(),
    status,
    auth_kind: authKind,
    granted_scopes: grantedScopes,
    access_token_expires_at: optionalTimestamp,
    last_refreshed_at: optionalTimestamp,
    refresh_count: z.int(),
  })
  .meta({ id: 'Connection' });

const oauthTokenExportSchema = z
  .object({
    id: z.string(),
    app: z.string(),
    auth_kind: z.literal('oauth2'),
    access_token: z.string(),
    refresh_token: z
      .string()
      .nullable()
      .meta({ description: 'null when the app issued no refresh token' }),
    expires_at: optionalTimestamp.meta({ description: 'When the access token expires' }),
  })
  .meta({ id: 'OAuthTokenExport' });

const enteredCredentialSchema = z
  .discriminatedUnion('scheme', [
    z.object({
      scheme: z.literal('api_key'),
      in: z.enum(['header', 'query']),
      name: z.string().meta({ description: 'The header or query parameter the key goes in' }),
      key: z.string(),
    }),
    z.object({
      scheme: z.literal('bearer'),
      token: z.string().meta({ description: 'Sent as `Authorization: Bearer <token>`' }),
    }),
    z.object({
      scheme: z.literal('basic'),
      username: z.string(),
      password: z.string().meta({
        description: 'Sent as `Authorization: Basic base64(username:password)`',
      }),
    }),
  ])
  .meta({ id: 'EnteredCredential' });

const credentialExportSchema = z
  .object({
    id: z.string(),
    app: z.string(),
    auth_kind: z.literal('credential'),
    credential: enteredCredentialSchema,
  })
  .meta({ id: 'CredentialExport' });

export const tokenExportSchema = z
  .discriminatedUnion('auth_kind', [oauthTokenExportSchema, credentialExportSchema])
  .meta({ id: 'TokenExport' });

export const reconnectLinkSchema = z
  .object({ url: z.url(), expires_at: timestamp })
  .meta({ id: 'ReconnectLink' });

export const refreshResultSchema = z
  .object({ id: z.string(), status, last_refreshed_at: optionalTimestamp })
  .meta({ id: 'ConnectionRefresh' });

export const revokedSchema = z
  .object({ id: z.string(), status: z.literal('revoked') })
  .meta({ id: 'ConnectionRevoked' });

// Each shape lists its fields one by one: nothing from the row (sealed tokens, auth config,
// provider scopes) can slip into a response by being added to the query.
export function presentConnectionListItem(
  connection: Connection,
): z.infer<typeof connectionListItemSchema> {
  return {
    id: connection.id,
    app: connection.app,
    status: connection.status,
    auth_kind: connection.authKind,
    granted_scopes: connection.grantedScopes,
    last_used_at: iso(connection.lastUsedAt),
    last_refreshed_at: iso(connection.lastRefreshedAt),
  };
}

export function presentConnection(connection: Connection): z.infer<typeof connectionSchema> {
  return {
    id: connection.id,
    connected_user_id: connection.connectedUserId,
    app: connection.app,
    status: connection.status,
    auth_kind: connection.authKind,
    granted_scopes: connection.grantedScopes,
    access_token_expires_at: iso(connection.accessTokenExpiresAt),
    last_refreshed_at: iso(connection.lastRefreshedAt),
    refresh_count: connection.refreshCount,
  };
}

/** The token export record: the only response that carries tokens. */
export function presentTokenExport(
  connection: Connection,
  tokens: TokenSet,
): z.infer<typeof tokenExportSchema> {
  return {
    id: connection.id,
    app: connection.app,
    auth_kind: 'oauth2',
    access_token: tokens.accessToken,
    refresh_token: tokens.refreshToken,
    expires_at: iso(tokens.expiresAt),
  };
}

/** A credential connection's export: the only response that carries the entered secret. */
export function presentCredentialExport(
  connection: Connection,
  stored: StoredCredential,
): z.infer<typeof tokenExportSchema> {
  const { scheme, secret } = stored;
  const credential: z.infer<typeof enteredCredentialSchema> =
    secret.scheme === 'basic'
      ? { scheme: 'basic', username: secret.username, password: secret.password }
      : secret.scheme === 'bearer'
        ? { scheme: 'bearer', token: secret.token }
        : {
            scheme: 'api_key',
            in: scheme.scheme === 'api_key' ? scheme.in : 'header',
            name: scheme.scheme === 'api_key' ? scheme.name : '',
            key: secret.key,
          };
  return { id: connection.id, app: connection.app, auth_kind: 'credential', credential };
}

export function presentReconnectLink(link: LinkView): z.infer<typeof reconnectLinkSchema> {
  return { url: link.url, expires_at: link.expires_at };
}
