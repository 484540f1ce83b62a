import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import type { McpAuthorization } from '../db/mcp-authorizations.js';
import { findRegistration } from '../db/mcp-client-registrations.js';
import { findMcpOAuthClient, revealMcpOAuthClientSecret } from '../db/mcp-oauth-clients.js';
import type { McpIdentity } from './identity.js';
import type { ByoCredentials, ProviderClient } from './provider.js';

type Deps = { sql: Db; config: Pick<Config, 'encryption'> };

/** Why an authorization's client can no longer be presented. */
export type ClientGone =
  { gone: 'retired'; mcpOAuthClientId: string } | { gone: 'refused'; registrationId: string };

async function byoCredentials(
  deps: Deps,
  environmentId: string,
  id: string,
): Promise<ByoCredentials | null> {
  const client = await findMcpOAuthClient(deps.sql, environmentId, id);
  if (!client || client.status === 'retired') return null;
  return {
    id,
    // Read now: a rotation (secret, and client id too) applies from the next token request.
    clientId: client.clientId,
    secret: await revealMcpOAuthClientSecret(deps.sql, deps.config.encryption, environmentId, id),
    authMethod: client.authMethod,
  };
}

/** The client a new authorization presents, as planned (identity.ts). */
export async function clientForIdentity(
  deps: Deps,
  environmentId: string,
  identity: McpIdentity,
): Promise<ProviderClient | ClientGone> {
  switch (identity.kind) {
    case 'byo': {
      const credentials = await byoCredentials(deps, environmentId, identity.client.id);
      return credentials
        ? { kind: 'byo', credentials }
        : { gone: 'retired', mcpOAuthClientId: identity.client.id };
    }
    case 'cimd':
      return { kind: 'cimd', url: identity.url };
    case 'dcr':
      return {
        kind: 'dcr',
        registrationId: identity.registration?.id ?? null,
        information:
          (identity.registration?.registration as OAuthClientInformationMixed | undefined) ?? null,
        metadata: identity.metadata,
      };
  }
}

/**
 * The client an attempt or a connection was authorised with, for its next token request: a
 * retired BYO client or a refused registration is gone (the connection must be reconnected).
 */
export async function clientForRecord(
  deps: Deps,
  environmentId: string,
  record: McpAuthorization,
): Promise<ProviderClient | ClientGone> {
  if (record.clientKind === 'byo' && record.mcpOAuthClientId !== null) {
    const credentials = await byoCredentials(deps, environmentId, record.mcpOAuthClientId);
    return credentials
      ? { kind: 'byo', credentials }
      : { gone: 'retired', mcpOAuthClientId: record.mcpOAuthClientId };
  }
  if (record.clientKind === 'dcr' && record.registrationId !== null) {
    const registration = await findRegistration(
      deps.sql,
      deps.config.encryption,
      record.registrationId,
    );
    if (!registration || registration.status === 'refused') {
      return { gone: 'refused', registrationId: record.registrationId };
    }
    return {
      kind: 'dcr',
      registrationId: registration.id,
      information: registration.registration as OAuthClientInformationMixed,
      metadata: { redirect_uris: [registration.redirectUri] },
    };
  }
  return { kind: 'cimd', url: record.clientId };
}

export function isGone(client: ProviderClient | ClientGone): client is ClientGone {
  return 'gone' in client;
}
