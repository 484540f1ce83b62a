import {
  buildDiscoveryUrls,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  type OAuthDiscoveryState,
  type OAuthServerInfo,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  checkResourceAllowed,
  resourceUrlFromServerUrl,
} from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpNotReady } from '../../workflows/mcp-connect-types.js';
import { sameIssuer } from './issuer.js';

/** What the server's `401` said (RFC 9728 §5.1, RFC 6750 §3): where its metadata is, which scope. */
export interface McpChallenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

export interface McpDiscovery {
  challenge: McpChallenge;
  /** The SDK's own discovery result, in the form its `auth()` takes back from a provider. */
  state: OAuthDiscoveryState;
  /**
   * The authorization server metadata says `authorization_response_iss_parameter_supported`
   * (RFC 9207 §3): its authorization responses must then carry `iss`.
   */
  issParameterSupported: boolean;
}

/** The server, or an authorization server it names, could not be reached. */
export class DiscoveryUnreachable extends Error {
  override name = 'DiscoveryUnreachable';
}

/**
 * A metadata document names another party than the one it was fetched for: an authorization
 * server claiming another's issuer, or resource metadata describing another resource. Nothing in
 * it is used, so no client is presented at what it names.
 */
export class MetadataMismatch extends Error {
  override name = 'MetadataMismatch';
  constructor(readonly notReady: Extract<McpNotReady, { reason: `${string}_mismatch` }>) {
    super(
      notReady.reason === 'issuer_mismatch'
        ? `the authorization server metadata fetched for ${notReady.issuer} names the issuer ${notReady.claimedIssuer}`
        : `the protected resource metadata fetched for ${notReady.resource} names the resource ${notReady.claimedResource}`,
    );
  }
}

/** Whether a failed request never got an HTTP answer (network, timeout, a refused address). */
function noAnswer(error: unknown): boolean {
  return (
    (error instanceof TypeError && error.message === 'fetch failed') ||
    (error instanceof DOMException &&
      (error.name === 'TimeoutError' || error.name === 'AbortError'))
  );
}

/**
 * Asks the server without a token, as an MCP client starts (`initialize`, then `tools/list`
 * when the server lets anyone initialize), through the SDK's own client, and reads the
 * `WWW-Authenticate` of its 401 with the SDK's parser. Nothing is left open at the server.
 */
async function readChallenge(serverUrl: string, fetchFn: FetchLike): Promise<McpChallenge> {
  let unauthorized: Response | undefined;
  const recording: FetchLike = async (url, init) => {
    const response = await fetchFn(url, init);
    if (response.status === 401) unauthorized = response;
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: recording });
  const client = new Client({ name: 'gatehouse', version: '0.1.0' });
  try {
    await client.connect(transport);
    await client.listTools();
  } catch (error) {
    if (noAnswer(error)) throw new DiscoveryUnreachable(`${serverUrl}: ${messageOf(error)}`);
    // Any other refusal: what the 401 said, if there was one, else the well-known paths.
  } finally {
    if (transport.sessionId) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
  if (!unauthorized) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(unauthorized);
  return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
}

function messageOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const message = error instanceof Error ? error.message : 'unknown error';
  return typeof cause === 'string' ? `${message} (${cause})` : message;
}

/**
 * RFC 9728 protected resource metadata (from the challenge's `resource_metadata`, else the
 * well-known paths) and the authorization server's metadata (RFC 8414, then OpenID discovery),
 * all by the SDK's `discoverOAuthServerInfo`, which checks neither document against what it was
 * fetched for; this does (see `assertMetadataNamesItsSource`).
 */
export async function discoverAuthorization(
  serverUrl: string,
  fetchFn: FetchLike,
): Promise<McpDiscovery> {
  const challenge = await readChallenge(serverUrl, fetchFn);
  /** Every document that answered 2xx, by URL, as fetched (before the SDK's schema read it). */
  const answered = new Map<string, Response>();
  const keeping: FetchLike = async (url, init) => {
    const response = await fetchFn(url, init);
    if (response.ok) answered.set(new URL(url).href, response.clone());
    return response;
  };
  let info;
  try {
    info = await discoverOAuthServerInfo(serverUrl, {
      ...(challenge.resourceMetadataUrl
        ? { resourceMetadataUrl: challenge.resourceMetadataUrl }
        : {}),
      fetchFn: keeping,
    });
  } catch (error) {
    // A 5xx, or metadata that is not what the RFCs say: the server's fault, for now.
    throw new DiscoveryUnreachable(`${serverUrl}: ${messageOf(error)}`);
  }
  assertMetadataNamesItsSource(serverUrl, info);
  return {
    challenge,
    issParameterSupported: await issParameterSupported(info.authorizationServerUrl, answered),
    state: {
      ...info,
      ...(challenge.resourceMetadataUrl
        ? { resourceMetadataUrl: challenge.resourceMetadataUrl.href }
        : {}),
    },
  };
}

/**
 * Whether the authorization server's metadata, as the SDK found it, says
 * `authorization_response_iss_parameter_supported: true`. Read from the document as it was
 * fetched: the SDK keeps the field of RFC 8414 metadata but drops it from OpenID discovery
 * metadata (its schema there keeps the fields it names only), and OpenID providers are the
 * servers that send `iss` most (oidc-provider always does). The SDK takes the first of the
 * well-known URLs that answers 2xx, so that one's document is the one read here.
 */
async function issParameterSupported(
  authorizationServerUrl: string,
  answered: ReadonlyMap<string, Response>,
): Promise<boolean> {
  const used = buildDiscoveryUrls(authorizationServerUrl)
    .map(({ url }) => answered.get(url.href))
    .find((response) => response !== undefined);
  if (!used) return false;
  try {
    const document: unknown = await used.json();
    return (
      typeof document === 'object' &&
      document !== null &&
      'authorization_response_iss_parameter_supported' in document &&
      document.authorization_response_iss_parameter_supported === true
    );
  } catch {
    // The SDK parsed it already: unreachable, and a document it could not read promises nothing.
    return false;
  }
}

/**
 * RFC 8414 §3.3 (and OpenID Connect Discovery §4.3): the `issuer` an authorization server's
 * metadata states must be the identifier its well-known URL was built from, or the document is
 * not used. Without this, a server that names an authorization server of its own, whose metadata
 * claims another's issuer, would be sent whatever Gatehouse presents at that issuer: an
 * operator's own client and its secret. Every client kind is refused there alike: endpoints from
 * such a document are no one's. RFC 9728 §3.3 likewise binds resource metadata to its resource;
 * it is held to the rule the SDK's `auth()` applies before it presents any client (same origin,
 * the server's path within the resource's), so a link is refused when it is made, not at its start.
 */
function assertMetadataNamesItsSource(serverUrl: string, info: OAuthServerInfo): void {
  const claimedResource = info.resourceMetadata?.resource;
  if (
    claimedResource !== undefined &&
    !checkResourceAllowed({
      requestedResource: resourceUrlFromServerUrl(serverUrl),
      configuredResource: claimedResource,
    })
  ) {
    throw new MetadataMismatch({
      reason: 'resource_mismatch',
      resource: serverUrl,
      claimedResource,
    });
  }
  const claimedIssuer = info.authorizationServerMetadata?.issuer;
  if (claimedIssuer !== undefined && !sameIssuer(claimedIssuer, info.authorizationServerUrl)) {
    throw new MetadataMismatch({
      reason: 'issuer_mismatch',
      issuer: info.authorizationServerUrl,
      claimedIssuer,
    });
  }
}
