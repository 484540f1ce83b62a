// The dev sign-in provider that `gatehouse dev` starts for the console, as a relying party meets
// it: openid-client (the library the console signs people in with) against the real
// oidc-provider, the person's part (the sign-in form) walked over plain HTTP.
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as oauth from 'openid-client';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { DEV_ACCOUNTS, DEV_PASSWORD, startDevIdentityProvider } from '../../infra/dev-idp/index.js';
import {
  signInAs,
  startTestIdentityProvider,
  walkSignIn,
  type SignInOutcome,
  type TestIdentityProvider,
} from '../support/identity-provider.js';
import { stopsAfterAll } from '../support/stops.js';

// Nothing listens on port 9: a walk stops at the redirect and reads its Location header.
const REDIRECT_URI = 'http://127.0.0.1:9/console/callback';
const CONSOLE_SCOPES = 'openid email profile groups';

const started = stopsAfterAll();
let idp: TestIdentityProvider;

beforeAll(async () => {
  idp = await startTestIdentityProvider(started, { redirectUris: [REDIRECT_URI] });
});

function discover(
  clientAuth: oauth.ClientAuth = oauth.ClientSecretBasic(idp.client.client_secret),
): Promise<oauth.Configuration> {
  return oauth.discovery(
    new URL(idp.issuer),
    idp.client.client_id,
    idp.client.client_secret,
    clientAuth,
    // The dev provider is plain http on loopback by design.
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    { execute: [oauth.allowInsecureRequests] },
  );
}

const atRedirectUri = (url: URL) => url.href.startsWith(REDIRECT_URI);

interface Attempt {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

async function authorizationRequest(
  config: oauth.Configuration,
  scope = CONSOLE_SCOPES,
): Promise<Attempt> {
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const nonce = oauth.randomNonce();
  const url = oauth.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, verifier, state, nonce };
}

/** Signs in as `email` through the form and exchanges the code: the ID token's claims. */
async function signInClaims(
  email: string,
  options: { scope?: string; clientAuth?: oauth.ClientAuth; onPage?: (html: string) => void } = {},
): Promise<oauth.IDToken> {
  const config = await discover(options.clientAuth);
  const attempt = await authorizationRequest(config, options.scope);
  const callback = await signInAs(attempt.url, email, {
    isDestination: atRedirectUri,
    ...(options.onPage ? { onPage: options.onPage } : {}),
  });
  const tokens = await oauth.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: attempt.verifier,
    expectedState: attempt.state,
    expectedNonce: attempt.nonce,
  });
  const claims = tokens.claims();
  if (!claims) throw new Error('no ID token in the token answer');
  return claims;
}

/** The redirect the provider answers an authorization request with, not followed. */
async function redirectOf(url: URL): Promise<URL | null> {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  return location === null ? null : new URL(location, url);
}

function refusal(outcome: SignInOutcome): { status: number; html: string } {
  if ('reached' in outcome) throw new Error(`signed in: ${outcome.reached.href}`);
  return outcome.refused;
}

describe('the dev sign-in provider', () => {
  it('publishes its discovery document: code flow with S256 only, the scopes and claims of the console', async () => {
    const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const metadata = (await res.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: idp.issuer,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: expect.arrayContaining(['openid', 'email', 'profile', 'groups']) as unknown,
      claims_supported: expect.arrayContaining([
        'sub',
        'email',
        'email_verified',
        'name',
        'groups',
      ]) as unknown,
      token_endpoint_auth_methods_supported: expect.arrayContaining([
        'client_secret_basic',
        'client_secret_post',
      ]) as unknown,
    });
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // openid-client takes it as it is, once told that http on loopback is meant.
    expect((await discover()).serverMetadata().issuer).toBe(idp.issuer);
  });

  it('signs Alice in through its form, asks no consent, and her ID token says who she is and her groups', async () => {
    const pages: string[] = [];
    const claims = await signInClaims('alice@example.com', { onPage: (html) => pages.push(html) });
    expect(claims).toMatchObject({
      iss: idp.issuer,
      aud: idp.client.client_id,
      sub: 'dev-alice',
      email: 'alice@example.com',
      email_verified: true,
      name: 'Alice Approver',
      groups: ['approvers'],
    });
    // One page, the sign-in form, which says it is a dev provider and gives the password.
    expect(pages).toHaveLength(1);
    expect(pages[0]).toContain('Gatehouse dev sign-in');
    expect(pages[0]).toContain('development provider');
    expect(pages[0]).toContain(`<code>${DEV_PASSWORD}</code>`);
  });

  it('takes the client secret in the body too, and signs each demo person in with their own groups', async () => {
    const post = oauth.ClientSecretPost(idp.client.client_secret);
    for (const account of DEV_ACCOUNTS) {
      // Each in a browser of their own (a fresh cookie jar), with the email as typed.
      const claims = await signInClaims(account.email.toUpperCase(), { clientAuth: post });
      expect(claims).toMatchObject({
        sub: account.sub,
        email: account.email,
        email_verified: true,
        name: account.name,
      });
      expect(claims['groups']).toEqual(account.groups);
    }
    // The pair a two-person approval asks for: two different people, one group each.
    const alice = DEV_ACCOUNTS.find((a) => a.email === 'alice@example.com');
    const bob = DEV_ACCOUNTS.find((a) => a.email === 'bob@example.com');
    expect(alice?.groups).toEqual(['approvers']);
    expect(bob?.groups).toEqual(['finance']);
  });

  it('signs the same browser in again without a page, prompt=consent too, and another person after prompt=login', async () => {
    const config = await discover();
    const jar = new CookieJar();
    const signIn = async (email: string, prompt?: string) => {
      const attempt = await authorizationRequest(config);
      if (prompt) attempt.url.searchParams.set('prompt', prompt);
      const pages: string[] = [];
      const callback = await signInAs(attempt.url, email, {
        jar,
        isDestination: atRedirectUri,
        onPage: (html) => pages.push(html),
      });
      const tokens = await oauth.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: attempt.verifier,
        expectedState: attempt.state,
        expectedNonce: attempt.nonce,
      });
      return { sub: tokens.claims()?.sub, pages: pages.length };
    };
    expect(await signIn('alice@example.com')).toEqual({ sub: 'dev-alice', pages: 1 });
    expect(await signIn('alice@example.com')).toEqual({ sub: 'dev-alice', pages: 0 });
    // A client that insists on consent is answered with the grant made already, without a page.
    expect(await signIn('alice@example.com', 'consent')).toEqual({ sub: 'dev-alice', pages: 0 });
    // The provider ends Alice's session on its own confirmation form before Bob's begins.
    expect(await signIn('bob@example.com', 'login')).toMatchObject({ sub: 'dev-bob' });
    expect(await signIn('bob@example.com')).toEqual({ sub: 'dev-bob', pages: 0 });
  });

  it('releases the groups only to a request for the groups scope', async () => {
    const claims = await signInClaims('olivia@example.com', { scope: 'openid email profile' });
    expect(claims).toMatchObject({ sub: 'dev-olivia', email: 'olivia@example.com' });
    expect(claims).not.toHaveProperty('groups');
  });

  it('refuses a wrong password, an unknown email and an empty form: no code reaches the client', async () => {
    const config = await discover();
    for (const [email, password] of [
      ['alice@example.com', 'not-the-password'],
      ['alice@example.com', `${DEV_PASSWORD} `],
      ['mallory@example.com', DEV_PASSWORD],
      ['', ''],
    ] as const) {
      const attempt = await authorizationRequest(config);
      const refused = refusal(
        await walkSignIn(attempt.url, email, { password, isDestination: atRedirectUri }),
      );
      expect(refused.status).toBe(email === '' ? 422 : 401);
      expect(refused.html).toMatch(/Wrong email or password|Enter an email and a password/);
    }
  });

  it('refuses an authorization request without PKCE, or with the plain method', async () => {
    const config = await discover();
    const params = { redirect_uri: REDIRECT_URI, scope: CONSOLE_SCOPES, state: 's' };
    const without: Record<string, string>[] = [
      {},
      { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
    ];
    for (const extra of without) {
      const redirect = await redirectOf(
        oauth.buildAuthorizationUrl(config, { ...params, ...extra }),
      );
      expect(redirect?.href.startsWith(REDIRECT_URI)).toBe(true);
      expect(redirect?.searchParams.get('error')).toBe('invalid_request');
      expect(redirect?.searchParams.get('code')).toBeNull();
    }
  });

  it('refuses a code exchanged without its verifier, or with another one', async () => {
    const config = await discover();
    for (const verifier of [undefined, oauth.randomPKCECodeVerifier()]) {
      const attempt = await authorizationRequest(config);
      const callback = await signInAs(attempt.url, 'alice@example.com', {
        isDestination: atRedirectUri,
      });
      await expect(
        oauth.authorizationCodeGrant(config, callback, {
          ...(verifier === undefined ? {} : { pkceCodeVerifier: verifier }),
          expectedState: attempt.state,
          expectedNonce: attempt.nonce,
        }),
      ).rejects.toMatchObject({ error: 'invalid_grant' });
    }
  });

  it('sends no one to a redirect URI it does not know', async () => {
    const config = await discover();
    const attempt = await authorizationRequest(config);
    attempt.url.searchParams.set('redirect_uri', 'http://127.0.0.1:9/elsewhere');
    const res = await fetch(attempt.url, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('redirect_uri');
  });

  it('makes its signing key at each start, and refuses clients and accounts it cannot serve', async () => {
    const keysOf = async (issuer: string) =>
      ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map(
        (key) => key.kid,
      );
    const other = started.add(await startDevIdentityProvider({ clients: [idp.client] }));
    expect(other.issuer).not.toBe(idp.issuer);
    expect(await keysOf(other.issuer)).not.toEqual(await keysOf(idp.issuer));
    await expect(startDevIdentityProvider({ clients: [] })).rejects.toThrow();
    await expect(
      startDevIdentityProvider({
        clients: [idp.client],
        accounts: [
          { sub: 'a', email: 'alice@example.com', name: 'Alice', groups: [] },
          { sub: 'b', email: 'ALICE@example.com', name: 'Not Alice', groups: ['approvers'] },
        ],
      }),
    ).rejects.toThrow(/email is repeated/);
  });
});
