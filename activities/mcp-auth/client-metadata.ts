import type { OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createHash } from 'node:crypto';
import type { Config } from '../../infra/config.js';
import type { McpClientBrandingInput } from '../db/mcp-client-branding.js';

/** Where an environment's client ID metadata document is served, below PUBLIC_URL. */
export const CLIENT_METADATA_PATH = '/mcp-clients/:environment/metadata.json';

/**
 * The URL that is Gatehouse's client id, in this environment, at authorization servers that
 * accept client ID metadata documents. Null unless PUBLIC_URL is https: the document's URL must
 * be (the SDK refuses any other), and a server fetching it must be able to trust what it reads.
 */
export function clientMetadataUrl(
  config: Pick<Config, 'api'>,
  environmentName: string,
): string | null {
  if (!config.api.publicUrl.startsWith('https://')) return null;
  return `${config.api.publicUrl}${CLIENT_METADATA_PATH.replace(':environment', environmentName)}`;
}

/** The branding's URIs under their RFC 7591 names, the unset ones left out. */
function brandingFields(branding: McpClientBrandingInput): Partial<OAuthClientMetadata> {
  return {
    client_name: branding.clientName,
    ...(branding.logoUri ? { logo_uri: branding.logoUri } : {}),
    ...(branding.clientUri ? { client_uri: branding.clientUri } : {}),
    ...(branding.policyUri ? { policy_uri: branding.policyUri } : {}),
    ...(branding.tosUri ? { tos_uri: branding.tosUri } : {}),
  };
}

/**
 * What Gatehouse registers as (RFC 7591): the branding, the connect callback, and the grants it
 * uses. `authMethod` is the strongest the server offers, since Gatehouse keeps secrets safely.
 */
export function registrationMetadata(
  branding: McpClientBrandingInput,
  redirectUri: string,
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none',
): OAuthClientMetadata {
  return {
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: authMethod,
    ...brandingFields(branding),
  };
}

/**
 * The client ID metadata document: the same metadata, as a public client (a document has no
 * secret to share), naming its own URL as `client_id`.
 */
export function metadataDocument(
  branding: McpClientBrandingInput,
  redirectUri: string,
  url: string,
): OAuthClientMetadata & { client_id: string } {
  return { client_id: url, ...registrationMetadata(branding, redirectUri, 'none') };
}

/** The method a registration asks for, from what the server says it supports (RFC 8414 default: basic). */
export function registrationAuthMethod(
  supported: string[] | undefined,
): 'client_secret_basic' | 'client_secret_post' | 'none' {
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

/** Names the metadata a registration was made with, so another branding registers anew. */
export function metadataSha256(metadata: OAuthClientMetadata): string {
  const sorted = Object.fromEntries(
    Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b)),
  );
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}
