// oidc-provider 9 ships no type definitions (and there is no @types package for v9), so these
// declare only the parts the demo app uses. Anything not listed here is deliberately untyped.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type AdapterPayload = Record<string, unknown>;

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    [key: string]: unknown;
  }

  /** The Koa context as seen by provider.use() middleware and the configuration hooks. */
  export interface KoaContextWithOIDC {
    method: string;
    path: string;
    status: number;
    type: string;
    body: unknown;
    oidc?: {
      route?: string;
      params?: Readonly<Record<string, unknown>>;
    };
  }

  export interface ClientView {
    clientId: string;
    grantTypeAllowed(grantType: string): boolean;
  }

  export interface TokenView {
    clientId?: string;
  }

  export interface Account {
    accountId: string;
    claims(): Promise<{ sub: string }> | { sub: string };
  }

  type TtlFunction = (ctx: KoaContextWithOIDC, token: unknown, client: ClientView) => number;

  export interface Configuration {
    adapter?: (name: string) => Adapter;
    clients?: ClientMetadata[];
    clientAuthMethods?: string[];
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: ClientView) => boolean;
    cookies?: {
      keys?: string[];
      names?: { session?: string; interaction?: string; resume?: string };
    };
    expiresWithSession?: (ctx: KoaContextWithOIDC, source: unknown) => Promise<boolean> | boolean;
    features?: Record<string, Record<string, unknown>>;
    findAccount?: (
      ctx: KoaContextWithOIDC,
      sub: string,
      token?: unknown,
    ) => Promise<Account | undefined> | Account | undefined;
    interactions?: { url?: (ctx: KoaContextWithOIDC, interaction: Interaction) => string };
    issueRefreshToken?: (
      ctx: KoaContextWithOIDC,
      client: ClientView,
      source: unknown,
    ) => Promise<boolean> | boolean;
    jwks?: { keys: object[] };
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: ClientView) => boolean };
    renderError?: (
      ctx: KoaContextWithOIDC,
      out: Record<string, string | undefined>,
      error: Error,
    ) => Promise<void> | void;
    responseTypes?: string[];
    rotateRefreshToken?: boolean;
    scopes?: string[];
    ttl?: Record<string, number | TtlFunction>;
  }

  export interface Interaction {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string; uid?: string };
    grantId?: string;
  }

  export type InteractionResult =
    | { error: string; error_description?: string }
    | { login?: { accountId: string }; consent?: { grantId: string } };

  export class Grant {
    constructor(init: { accountId: string; clientId: string });
    static find(id: string): Promise<Grant | undefined>;
    accountId?: string;
    clientId?: string;
    readonly isExpired: boolean;
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export class AccessToken {
    static find(value: string): Promise<AccessToken | undefined>;
    accountId?: string;
    clientId?: string;
    grantId?: string;
    scope?: string;
    readonly isExpired: boolean;
  }

  export interface ClientModel {
    validate(metadata: ClientMetadata): Promise<void>;
  }

  type Middleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    readonly Grant: typeof Grant;
    readonly AccessToken: typeof AccessToken;
    readonly Client: ClientModel;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    use(middleware: Middleware): this;
    on(event: 'server_error', listener: (ctx: KoaContextWithOIDC, error: Error) => void): this;
    on(event: string, listener: (ctx: KoaContextWithOIDC, error?: Error) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResult,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }

  export default Provider;
}
