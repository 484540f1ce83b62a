// oidc-provider 9 ships no type definitions; infra/demo-app/oidc-provider.d.ts declares what the
// demo app uses. These declarations merge with those and add only what the dev sign-in provider
// uses besides: released claims, and the hook that grants its first-party clients without a
// consent page.
declare module 'oidc-provider' {
  /** What `loadExistingGrant` reads of the authorization request's context. */
  export interface GrantLookupContext {
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      account?: { accountId: string };
      session?: { grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
      /** The OIDC scopes the request asks for that the provider knows. */
      requestParamOIDCScopes: Set<string>;
      /** The claims the request's `claims` parameter asks for. */
      requestParamClaims: Set<string>;
    };
  }

  interface Configuration {
    /** Scope → the claims it releases (a claim listed under `openid` goes with every token). */
    claims?: Record<string, string[]>;
    /** false: the claims of the granted scopes go into the ID token too, not only userinfo. */
    conformIdTokenClaims?: boolean;
    loadExistingGrant?: (ctx: GrantLookupContext) => Promise<Grant | undefined>;
  }

  interface Grant {
    addOIDCClaims(claims: string[]): void;
  }
}
