import type { McpNotReady } from '../../workflows/mcp-connect-types.js';
import { ApiError, ConflictError } from '../errors.js';

/**
 * Why a connect link to a remote MCP app would not work, said to its creator with what to do: what
 * to set so Gatehouse can identify itself at the authorization server, in the order it tries them
 * (a selected MCP OAuth client, its client ID metadata document, dynamic registration), or that the
 * server itself is refused or out of reach.
 */
export function mcpNotReadyError(app: string, notReady: McpNotReady): ApiError {
  switch (notReady.reason) {
    case 'unreachable':
      return new ApiError(
        'upstream_unavailable',
        `The MCP server of "${app}" or its authorization server could not be reached to discover how to authorize (${notReady.detail}); retry later.`,
        { app },
      );
    case 'no_metadata':
      return new ConflictError(
        `The authorization server ${notReady.issuer} of "${app}" publishes no metadata (RFC 8414 or OpenID discovery), so Gatehouse cannot check that it supports PKCE S256, and does not connect users to it.`,
        { app, issuer: notReady.issuer },
      );
    case 'no_s256':
      return new ConflictError(
        `The authorization server ${notReady.issuer} of "${app}" does not advertise PKCE S256 (code_challenge_methods_supported), which the MCP authorization specification requires: Gatehouse does not connect users to it.`,
        { app, issuer: notReady.issuer },
      );
    case 'issuer_mismatch':
      return new ConflictError(
        `The MCP server of "${app}" names the authorization server ${notReady.issuer}, whose metadata claims to be ${notReady.claimedIssuer}. RFC 8414 requires the issuer it states to be the one its metadata was fetched for, so Gatehouse uses nothing in it and presents no client there: an MCP OAuth client for ${notReady.claimedIssuer} is presented only at ${notReady.claimedIssuer} itself. Check the server's URL and its authorization server's configuration.`,
        { app, issuer: notReady.issuer, claimed_issuer: notReady.claimedIssuer },
      );
    case 'resource_mismatch':
      return new ConflictError(
        `The protected resource metadata of "${app}" (${notReady.resource}) describes another resource, ${notReady.claimedResource}. RFC 9728 binds it to the server it was fetched for, so Gatehouse uses nothing in it. Check the server's URL and its resource metadata.`,
        { app, resource: notReady.resource, claimed_resource: notReady.claimedResource },
      );
    case 'no_client':
      return new ApiError('auth_config_required', noClientMessage(app, notReady), {
        app,
        issuer: notReady.issuer,
        redirect_uri: notReady.redirectUri,
      });
  }
}

function noClientMessage(app: string, n: Extract<McpNotReady, { reason: 'no_client' }>): string {
  const byo = `register Gatehouse as a client at ${n.issuer} with the redirect URI ${n.redirectUri}, then add it with POST /v1/mcp-oauth-clients (app "${app}", issuer ${n.issuer}) and select it with POST /v1/mcp-oauth-clients/{id}/select`;
  const mismatch = n.selectedClient
    ? ` The selected MCP OAuth client ${n.selectedClient.id} is for the issuer ${n.selectedClient.issuer}, not ${n.issuer}.`
    : '';
  const intro = `Gatehouse has no way to identify itself to ${n.issuer}, the authorization server of "${app}".${mismatch}`;
  if (!n.brandingSet && (n.dcrSupported || n.cimdSupported)) {
    const how = n.dcrSupported
      ? 'Gatehouse then registers itself there (dynamic client registration)'
      : 'Gatehouse then presents its client ID metadata document there (this needs an https PUBLIC_URL)';
    return `${intro} Set the MCP client branding with PUT /v1/mcp-client-branding: ${how}. Or ${byo}.`;
  }
  const offers = n.cimdSupported
    ? ' It accepts client ID metadata documents, but those need Gatehouse on an https PUBLIC_URL, and it offers no dynamic client registration.'
    : ' It offers neither dynamic client registration nor client ID metadata documents.';
  return `${intro}${offers} To connect users, ${byo}.`;
}
