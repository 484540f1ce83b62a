import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import type { McpAuthorization } from '../db/mcp-authorizations.js';
import { findRegistration } from '../db/mcp-client-registrations.js';
import { findMcpOAuthClient, revealMcpOAuthClientSecret } from '../db/mcp-oauth-clients.js';
import type { McpIdentity } from './identity.js';
import { sameIssuer } from './issuer.js';
import type { ByoCredentials, ProviderClient } from './provider.js';

type Deps = { sql: Db; config: Pick<Config, 'encryption'> };

/**
 * Why an authorization's client can no longer be presented. `elsewhere`: an operator's client
 * recorded against another authorization server than its own issuer, as a connection made
 * before discovery checked the metadata's issuer could be; its secret is not sent there again.
 */
export type ClientGone =
  | { gone: 'retired'; mcpOAuthClientId: string }
  | { gone: 'refused'; registrationId: string }
  | { gone: 'elsewhere'; mcpOAuthClientId: string };

async function byoCredentials(
  deps: Deps,
  environmentId: string,
  id: string,
  issuer: string,
): Promise<ByoCredentials | ClientGone> {
  const client = await findMcpOAuthClient(deps.sql, environmentId, id);
  if (!client || client.status === 'retired') return { gone: 'retired', mcpOAuthClientId: id };
  // Presented at its own issuer only, whatever chose it.
  if (!sameIssuer(client.issuer, issuer)) return { gone: 'elsewhere', mcpOAuthClientId: id };
  return {
    id,
    // Read now: a rotation (secret, and client id too) applies from the next token request.
    clientId: client.clientId,
    secret: await revealMcpOAuthClientSecret(deps.sql, deps.config.encryption, environmentId, id),
    authMethod: client.authMethod,
  };
}

/** The client a new authorization at `issuer` presents, as planned (identity.ts). */
export async function clientForIdentity(
  deps: Deps,
  environmentId: string,
  identity: McpIdentity,
  issuer: string,
): Promise<ProviderClient | ClientGone> {
  switch (identity.kind) {
    case 'byo': {
      const credentials = await byoCredentials(deps, environmentId, identity.client.id, issuer);
      return isGone(credentials) ? credentials : { kind: 'byo', credentials };
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
    const credentials = await byoCredentials(
      deps,
      environmentId,
      record.mcpOAuthClientId,
      record.issuer,
    );
    return isGone(credentials) ? credentials : { kind: 'byo', credentials };
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

export function isGone(client: object): client is ClientGone {
  return 'gone' in client;
}
