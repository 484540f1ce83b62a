import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  AccountUnverified,
  identityAt,
  learnAccountId,
} from '../../activities/oauth/account-identity.js';
import { oauth, oauthConfiguration } from '../../activities/oauth/client.js';
import { appEndpoints } from '../../activities/oauth/endpoints.js';
import { startDemoApp, type DemoApp, type DemoClient } from '../../infra/demo-app/index.js';
import { consentAtDemoApp } from '../../infra/demo-app/scripted-consent.js';
import { acme } from '../../workflows/catalog/apps/acme.js';
import type { AppDefinition } from '../../workflows/catalog/index.js';
import { stopsAfterAll } from '../support/stops.js';

// Nothing listens on port 9: the flow stops at the redirect and reads its Location header.
const REDIRECT_URI = 'http://127.0.0.1:9/connect/callback';
const client: DemoClient = {
  clientId: 'identity-test',
  clientSecret: 'identity-test-secret',
  redirectUris: [REDIRECT_URI],
};

let demo: DemoApp;
let apiBaseUrl: string;
let configuration: oauth.Configuration;

const started = stopsAfterAll();

beforeAll(async () => {
  demo = started.add(await startDemoApp());
  await demo.registerClient(client);
  const endpoints = appEndpoints(acme, { acme: { oauth: demo.url, api: demo.url } });
  apiBaseUrl = endpoints.apiBaseUrl;
  configuration = oauthConfiguration(acme, endpoints, client);
});

/** A real token response of the demo app, as acme's connect flow gets it. */
async function tokensOf(
  username: string,
  scopes: readonly string[] = acme.oauth.defaultScopes,
): Promise<oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers> {
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const url = oauth.buildAuthorizationUrl(configuration, {
    redirect_uri: REDIRECT_URI,
    scope: scopes.join(' '),
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callback = await consentAtDemoApp(url, (next) => next.href.startsWith(REDIRECT_URI), {
    username,
  });
  return oauth.authorizationCodeGrant(configuration, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
}

const withIdentity = (accountIdentity: AppDefinition['accountIdentity']): AppDefinition => ({
  ...acme,
  accountIdentity,
});

describe('the values that name an account', () => {
  it('reads strings and numbers at their paths; several make one JSON array', () => {
    expect(identityAt({ id: 'U1' }, [['id']])).toBe('U1');
    expect(identityAt({ id: 583231 }, [['id']])).toBe('583231');
    expect(identityAt({ a: { b: 'x' }, c: 7 }, [['a', 'b'], ['c']])).toBe('["x","7"]');
  });

  it('names no account from a missing, empty, or non-scalar value, nor from inherited keys', () => {
    expect(identityAt({}, [['id']])).toBeUndefined();
    expect(identityAt(null, [['id']])).toBeUndefined();
    expect(identityAt({ id: '' }, [['id']])).toBeUndefined();
    expect(identityAt({ id: { nested: 1 } }, [['id']])).toBeUndefined();
    expect(identityAt({ id: ['U1'] }, [['id']])).toBeUndefined();
    expect(identityAt({ id: true }, [['id']])).toBeUndefined();
    expect(identityAt({ a: 'x' }, [['a'], ['b']])).toBeUndefined();
    expect(identityAt({}, [['constructor', 'name']])).toBeUndefined();
    expect(identityAt({}, [])).toBeUndefined();
  });
});

describe('learning the account of a token response', () => {
  it('takes the ID token’s sub for acme, the demo user’s name', async () => {
    const tokens = await tokensOf('ident-alice');
    expect(await learnAccountId(acme, tokens, apiBaseUrl)).toBe('ident-alice');
  });

  it('refuses an OpenID app’s answer without an ID token', async () => {
    const tokens = await tokensOf('ident-plain', ['tasks:read']);
    await expect(learnAccountId(acme, tokens, apiBaseUrl)).rejects.toBeInstanceOf(
      AccountUnverified,
    );
  });

  it('asks the app’s API with the new token when the catalog says so', async () => {
    const tokens = await tokensOf('ident-bob');
    const app = withIdentity({
      from: 'api',
      request: { method: 'GET', path: '/me' },
      fields: [['id']],
    });
    expect(await learnAccountId(app, tokens, apiBaseUrl)).toBe('ident-bob');

    // An app that refuses the token tells no account.
    await demo.revokeGrants('ident-bob');
    await expect(learnAccountId(app, tokens, apiBaseUrl)).rejects.toBeInstanceOf(AccountUnverified);
  });

  it('reads the token response itself, and refuses one without the fields', async () => {
    const tokens = await tokensOf('ident-carol');
    const app = withIdentity({ from: 'token_response', fields: [['authed_user', 'id']] });
    await expect(learnAccountId(app, tokens, apiBaseUrl)).rejects.toBeInstanceOf(AccountUnverified);
    expect(
      await learnAccountId(
        withIdentity({ from: 'token_response', fields: [['token_type']] }),
        tokens,
        apiBaseUrl,
      ),
    ).toBe('bearer');
  });

  it('names no account for an app whose catalog entry does not say how', async () => {
    const tokens = await tokensOf('ident-dave');
    expect(await learnAccountId(withIdentity(undefined), tokens, apiBaseUrl)).toBeNull();
  });
});
