import type {
  AddClientAuthentication,
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpAuthMethod } from '../db/mcp-oauth-clients.js';

/** A BYO client as one token request presents it: its current id and secret (rotate applies). */
export interface ByoCredentials {
  /** The MCP OAuth client's own id (management interface), named in every refusal. */
  id: string;
  clientId: string;
  secret: string | null;
  authMethod: McpAuthMethod;
}

/** Who the provider presents itself as; see identity.ts for how it is chosen. */
export type ProviderClient =
  | { kind: 'byo'; credentials: ByoCredentials }
  | { kind: 'cimd'; url: string }
  /** `information` null: none yet, the SDK registers with `metadata` and hands it to `saveRegistration`. */
  | {
      kind: 'dcr';
      registrationId: string | null;
      information: OAuthClientInformationMixed | null;
      metadata: OAuthClientMetadata;
    };

export interface ProviderOptions {
  /** `start`: no client information for a CIMD yet, so the SDK presents the document's URL. */
  phase: 'start' | 'exchange' | 'refresh';
  redirectUrl: string;
  discovery: OAuthDiscoveryState;
  client: ProviderClient;
  state?: string;
  codeVerifier?: string;
  /** Stores a registration the SDK just made (sealed) and answers its row id. */
  saveRegistration?: (information: OAuthClientInformationMixed) => Promise<string>;
  /** The authorization server answered `invalid_client` to the registration with this id. */
  registrationRefused?: (registrationId: string) => Promise<void>;
}

/**
 * The authorization server refused an MCP OAuth client of the operator's (`invalid_client`).
 * Gatehouse never registers itself instead: the operator chose this client, and is told which.
 */
export class McpClientRefused extends Error {
  override name = 'McpClientRefused';
  constructor(
    readonly clientRecordId: string,
    readonly clientId: string,
    issuer: string,
  ) {
    super(
      `${issuer} refused MCP OAuth client ${clientRecordId} (client_id ${clientId}) as invalid_client: check its secret (rotate it) and its registration there, or select another client`,
    );
  }
}

/** application/x-www-form-urlencoded, which RFC 6749 §2.3.1 applies before Basic encoding. */
const formEncoded = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

/**
 * RFC 6749 §2.3.1 as the operator chose for a BYO client (`authMethod`), whatever the server's
 * metadata lists: the client was registered with that method.
 */
function byoAuthentication(credentials: ByoCredentials): AddClientAuthentication {
  return (headers, params) => {
    const { clientId, secret, authMethod } = credentials;
    if (authMethod === 'none') {
      params.set('client_id', clientId);
      return;
    }
    if (secret === null) {
      throw new Error(`MCP OAuth client ${credentials.id} has no secret (retired?)`);
    }
    if (authMethod === 'client_secret_post') {
      params.set('client_id', clientId);
      params.set('client_secret', secret);
      return;
    }
    const basic = Buffer.from(`${formEncoded(clientId)}:${formEncoded(secret)}`).toString('base64');
    headers.set('Authorization', `Basic ${basic}`);
  };
}

/**
 * The SDK's `OAuthClientProvider` for one authorization step of one connect attempt or
 * connection: the SDK runs the flow (resource indicator, scope, PKCE, registration,
 * token request) and this object hands it what Postgres holds and keeps what it produces until
 * the caller stores it. It holds no tokens of a connection: refreshes call the SDK's
 * `refreshAuthorization` with this object's client.
 */
export class GatehouseOAuthProvider implements OAuthClientProvider {
  /** Where the browser goes (captured, not followed: the API redirects it). */
  authorizationUrl: URL | undefined;
  savedCodeVerifier: string | undefined;
  savedTokens: OAuthTokens | undefined;
  /** The registration the SDK made during this step, once stored. */
  newRegistrationId: string | undefined;
  readonly addClientAuthentication?: AddClientAuthentication;
  #information: OAuthClientInformationMixed | null;
  /** The server refused the client (`invalid_client`): it is not presented again. */
  #refused = false;

  constructor(private readonly options: ProviderOptions) {
    const { client } = options;
    this.#information = client.kind === 'dcr' ? client.information : null;
    if (client.kind === 'byo') {
      this.addClientAuthentication = byoAuthentication(client.credentials);
    }
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { client } = this.options;
    return client.kind === 'dcr' ? client.metadata : { redirect_uris: [this.redirectUrl] };
  }

  /** Only while starting with a CIMD: the SDK then presents it instead of registering. */
  get clientMetadataUrl(): string | undefined {
    const { client, phase } = this.options;
    return client.kind === 'cimd' && phase === 'start' ? client.url : undefined;
  }

  get issuer(): string {
    return this.options.discovery.authorizationServerUrl;
  }

  state(): string {
    if (this.options.state === undefined) throw new Error('no state for this authorization');
    return this.options.state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const { client, phase } = this.options;
    if (client.kind === 'byo') {
      const { credentials } = client;
      if (this.#refused) {
        throw new McpClientRefused(credentials.id, credentials.clientId, this.issuer);
      }
      return {
        client_id: credentials.clientId,
        ...(credentials.secret === null ? {} : { client_secret: credentials.secret }),
        issuer: this.issuer,
      };
    }
    if (this.#refused) return undefined;
    if (client.kind === 'cimd') {
      return phase === 'start' ? undefined : { client_id: client.url, issuer: this.issuer };
    }
    return this.#information ?? undefined;
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    const { client } = this.options;
    // A CIMD's "information" is its URL, already known; a BYO client is the operator's.
    if (client.kind !== 'dcr' || this.#information !== null) return;
    if (!this.options.saveRegistration) throw new Error('this step may not register a client');
    this.newRegistrationId = await this.options.saveRegistration(information);
    this.#information = information;
  }

  tokens(): undefined {
    return undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.savedCodeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.options.codeVerifier === undefined) throw new Error('no PKCE verifier for this step');
    return this.options.codeVerifier;
  }

  discoveryState(): OAuthDiscoveryState {
    return this.options.discovery;
  }

  saveDiscoveryState(): void {
    // The state came from the attempt or the connection, and stays what it was when authorised.
  }

  /**
   * The SDK says the server refused the client (`all`/`client`, on `invalid_client`) or the
   * grant (`tokens`). A registration is marked refused, so the next connect registers anew
   * (once: the retry of this step has no client to present); a BYO client is never replaced.
   */
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope !== 'all' && scope !== 'client') return;
    this.#refused = true;
    const { client } = this.options;
    const registrationId =
      client.kind === 'dcr' ? (this.newRegistrationId ?? client.registrationId) : null;
    if (registrationId !== null) await this.options.registrationRefused?.(registrationId);
  }
}
