import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import type { McpNotReady } from '../../workflows/mcp-connect-types.js';
import { getMcpClientBranding } from '../db/mcp-client-branding.js';
import {
  findCurrentRegistration,
  type McpClientRegistration,
} from '../db/mcp-client-registrations.js';
import { findSelectedMcpOAuthClient, type McpOAuthClient } from '../db/mcp-oauth-clients.js';
import { connectRedirectUri } from '../oauth/redirect-uri.js';
import { metadataSha256, registrationAuthMethod, registrationMetadata } from './client-metadata.js';
import { sameIssuer } from './issuer.js';

/** How Gatehouse will identify itself for one authorization, in the order. */
export type McpIdentity =
  | { kind: 'byo'; client: McpOAuthClient }
  | { kind: 'cimd'; url: string }
  /** `registration` null: register now, with `metadata`. */
  | {
      kind: 'dcr';
      registration: McpClientRegistration | null;
      metadata: OAuthClientMetadata;
      metadataSha256: string;
    };

export interface IdentityContext {
  sql: Db;
  config: Pick<Config, 'api' | 'encryption'>;
  environmentId: string;
  appId: string;
  /** This environment's client ID metadata document URL; null where there is none (http). */
  metadataUrl: string | null;
}

/** A registration is no good once its secret expired (RFC 7591 `client_secret_expires_at`, 0: never). */
function expired(registration: McpClientRegistration, now: Date): boolean {
  const expiresAt = registration.registration.client_secret_expires_at;
  return typeof expiresAt === 'number' && expiresAt > 0 && expiresAt * 1000 <= now.getTime();
}

/**
 * Decides who Gatehouse is at this authorization server: the app's selected
 * MCP OAuth client when its issuer is the server discovery fetched the metadata for (never the
 * `issuer` the metadata states: discovery.ts refused metadata whose issuer is another's, and a
 * client is presented at its own issuer only); otherwise the environment's client
 * ID metadata document, when the server accepts them and PUBLIC_URL is https; otherwise dynamic
 * registration with the branding, reusing the current registration made with the same branding.
 * A server that does not advertise PKCE S256 is refused whatever else it offers.
 */
export async function planIdentity(
  context: IdentityContext,
  discovery: OAuthDiscoveryState,
): Promise<{ ok: true; identity: McpIdentity } | { ok: false; notReady: McpNotReady }> {
  const issuer = discovery.authorizationServerUrl;
  const metadata = discovery.authorizationServerMetadata;
  if (!metadata) return { ok: false, notReady: { reason: 'no_metadata', issuer } };
  if (!metadata.code_challenge_methods_supported?.includes('S256')) {
    return { ok: false, notReady: { reason: 'no_s256', issuer } };
  }
  const { sql, config, environmentId } = context;
  const selected = await findSelectedMcpOAuthClient(sql, environmentId, context.appId);
  if (selected && sameIssuer(selected.issuer, issuer)) {
    return { ok: true, identity: { kind: 'byo', client: selected } };
  }
  const branding = await getMcpClientBranding(sql, environmentId);
  const cimdSupported = metadata.client_id_metadata_document_supported === true;
  const dcrSupported = typeof metadata.registration_endpoint === 'string';
  if (branding && cimdSupported && context.metadataUrl) {
    return { ok: true, identity: { kind: 'cimd', url: context.metadataUrl } };
  }
  const redirectUri = connectRedirectUri(config.api);
  if (branding && dcrSupported) {
    const wanted = registrationMetadata(
      branding,
      redirectUri,
      registrationAuthMethod(metadata.token_endpoint_auth_methods_supported),
    );
    const sha = metadataSha256(wanted);
    const current = await findCurrentRegistration(sql, config.encryption, {
      environmentId,
      issuer,
      redirectUri,
    });
    const reusable = current && current.metadataSha256 === sha && !expired(current, new Date());
    return {
      ok: true,
      identity: {
        kind: 'dcr',
        registration: reusable ? current : null,
        metadata: wanted,
        metadataSha256: sha,
      },
    };
  }
  return {
    ok: false,
    notReady: {
      reason: 'no_client',
      issuer,
      selectedClient: selected ? { id: selected.id, issuer: selected.issuer } : null,
      brandingSet: branding !== null,
      cimdSupported,
      dcrSupported,
      redirectUri,
    },
  };
}
