/**
 * What the workflows of an MCP app's connect flow are asked and answer. No secret
 * travels in either: the browser's cookie is named by its hash, the PKCE verifier and any client
 * secret stay in Postgres, and the authorize URL carries only what the browser is shown anyway.
 */

/** `/connect/<token>/start` for an MCP app: the attempt to record and the browser it belongs to. */
export interface McpStartInput {
  /** Made by the API, so the workflow id names the attempt (`connect-start/<attempt id>`). */
  attemptId: string;
  linkId: string;
  browser: { ref: string; secretSha256Hex: string };
}

export type McpStartOutcome =
  | { ok: true; authorizationUrl: string }
  | {
      ok: false;
      /**
       * `app_not_configured`: no way to identify Gatehouse to the authorization server, or one
       * it refuses to use (no PKCE S256); `app_unavailable`: the server or its authorization
       * server could not be reached or answered nonsense; `app_untrusted`: a metadata document
       * names another party than the one it was fetched for, so nothing is presented there.
       */
      code:
        | 'link_invalid'
        | 'link_used'
        | 'link_expired'
        | 'app_not_configured'
        | 'app_unavailable'
        | 'app_untrusted';
    };

/** Whether a connect link for an MCP app can work, asked when the link is created. */
export interface McpReadinessInput {
  environmentId: string;
  appId: string;
}

/** Why no connect can work now; each is said to the link's creator in words (api/). */
export type McpNotReady =
  /** The server or its authorization server did not answer (retry later). */
  | { reason: 'unreachable'; detail: string }
  /** No authorization server metadata (RFC 8414 / OpenID discovery) was found. */
  | { reason: 'no_metadata'; issuer: string }
  /** The authorization server does not advertise PKCE S256: Gatehouse refuses it. */
  | { reason: 'no_s256'; issuer: string }
  /**
   * The metadata fetched for the authorization server `issuer` states another issuer
   * (RFC 8414 §3.3): it is not used, and no client is presented at the endpoints it names.
   */
  | { reason: 'issuer_mismatch'; issuer: string; claimedIssuer: string }
  /** The resource metadata of the server at `resource` describes another resource (RFC 9728 §3.3). */
  | { reason: 'resource_mismatch'; resource: string; claimedResource: string }
  /** Nothing to identify Gatehouse with: what could be set is in the fields. */
  | {
      reason: 'no_client';
      issuer: string;
      /** The selected MCP OAuth client, when its issuer is another server. */
      selectedClient: { id: string; issuer: string } | null;
      brandingSet: boolean;
      /** The server accepts client ID metadata documents, which need an https PUBLIC_URL. */
      cimdSupported: boolean;
      /** The server offers dynamic client registration. */
      dcrSupported: boolean;
      redirectUri: string;
    };

export type McpReadiness =
  | { ready: true; clientKind: 'byo' | 'cimd' | 'dcr'; issuer: string }
  | ({ ready: false } & McpNotReady);
