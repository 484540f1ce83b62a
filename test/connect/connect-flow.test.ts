import { beforeAll, describe, expect, it } from '@jest/globals';
import { saveConnectSettings } from '../../activities/db/connect-settings.js';
import { readTokens } from '../../activities/db/connections.js';
import { setFundedAccess } from '../../activities/db/funded-access.js';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import {
  consentThroughLink,
  returnToCallback,
  walkConnectLink,
  type AtCallback,
  type WalkOptions,
} from '../../infra/demo-app/scripted-connect.js';
import { historyText } from '../support/workflow-history.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { createTestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
});

interface Link {
  id: string;
  url: string;
  expires_at: string;
}

async function newLink(body: Record<string, unknown>): Promise<Link> {
  const response = await createLink(stack, body);
  expect(response.status).toBe(201);
  return (await response.json()) as Link;
}

async function connectionsOf(user: string) {
  return stack.db.sql<
    { id: string; status: string; grantedScopes: string[]; authConfigId: string | null }[]
  >`
    select c.id, c.status, c.granted_scopes, c.auth_config_id from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} order by c.created_at`;
}

/** The attempts of a link, oldest first: whether each was spent and holds a parked callback. */
async function attemptsOf(linkId: string) {
  return stack.db.sql<{ spent: boolean; parked: boolean }[]>`
    select consumed_at is not null as spent, callback_params_sealed is not null as parked
    from oauth_attempts where link_id = ${linkId} order by created_at`;
}

/** A link walked up to the redirect back to Gatehouse, in the browser of `jar` (default: new). */
async function atCallback(
  linkUrl: string,
  options: Omit<WalkOptions, 'beforeCallback'> = {},
): Promise<AtCallback> {
  const reached = await consentThroughLink(linkUrl, options);
  if ('refused' in reached) throw new Error(`link refused: ${String(reached.refused.status)}`);
  return reached;
}

/** Gatehouse's attempt cookies in a browser's jar. */
const bindingCookies = (jar: CookieJar) =>
  jar.names().filter((name) => name.startsWith('gatehouse_connect_'));

describe('POST /v1/connect/links', () => {
  it('creates a single-use link valid for one hour, and the user with its customer', async () => {
    const before = Date.now();
    const link = await newLink({ user: 'u_link', customer: 'acme-corp', app: 'acme' });
    expect(Object.keys(link).sort()).toEqual(['expires_at', 'id', 'url']);
    expect(link.url).toMatch(
      new RegExp(`^${stack.config.api.publicUrl}/connect/[A-Za-z0-9_-]{32}$`),
    );
    const lifetime = new Date(link.expires_at).getTime() - before;
    expect(lifetime).toBeGreaterThan(59 * 60 * 1000);
    expect(lifetime).toBeLessThanOrEqual(61 * 60 * 1000);
    const [user] = await stack.db.sql<{ customer: string }[]>`
      select customer from connected_users where external_id = 'u_link'`;
    expect(user?.customer).toBe('acme-corp');
  });

  it('refuses an unknown app, a missing user and unknown fields', async () => {
    const unknown = await createLink(stack, { user: 'u', app: 'nope' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { issues: unknown[] } }).error.issues).toEqual([
      { path: 'app', message: 'unknown app' },
    ]);
    expect((await createLink(stack, { app: 'acme' })).status).toBe(400);
    expect((await createLink(stack, { user: 'u', app: 'acme', colour: 'red' })).status).toBe(400);
    expect(
      (await createLink(stack, { user: 'u', app: 'acme', redirect_url: 'javascript:alert(1)' }))
        .status,
    ).toBe(400);
  });

  it('refuses an app without an OAuth client with auth_config_required, unless funded access stands in', async () => {
    const other = await createTestKey(stack.db.sql, { env: 'unfunded', access: 'full' });
    const refused = await createLink(stack, { user: 'u', app: 'acme' }, other.key);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'auth_config_required',
    );
    await setFundedAccess(stack.db.sql, other.environmentId, true, 'test');
    // Funded access alone is not enough: this deployment has no platform client for acme.
    expect((await createLink(stack, { user: 'u', app: 'acme' }, other.key)).status).toBe(409);
  });

  it('refuses a read-only key', async () => {
    const reader = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
    expect((await createLink(stack, { user: 'u', app: 'acme' }, reader.key)).status).toBe(403);
  });
});

describe('the hosted connect flow', () => {
  it('connects a user end to end and stores the connection with sealed tokens', async () => {
    const link = await newLink({ user: 'u_flow', customer: 'c1', app: 'acme' });
    const landing = await fetch(link.url);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await landing.text();
    expect(page).toContain('Acme Tasks');
    expect(page).toContain('Gatehouse');

    const result = await walkConnectLink(link.url);
    expect(result.status).toBe(200);
    expect(result.html).toContain('is connected');

    const [connection] = await connectionsOf('u_flow');
    expect(connection).toMatchObject({ status: 'active', grantedScopes: ['read', 'write'] });
    const [raw] = await stack.db.sql<{ accessTokenSealed: string; refreshTokenSealed: string }[]>`
      select access_token_sealed, refresh_token_sealed from connections where id = ${connection?.id ?? ''}`;
    expect(raw?.accessTokenSealed).toMatch(/^v1\.k1\./);
    const tokens = await readTokens(stack.db.sql, stack.config.encryption, connection?.id ?? '');
    expect(tokens?.refreshToken).toBeTruthy();
    const tasks = await fetch(`${stack.demo.url}/tasks`, {
      headers: { authorization: `Bearer ${tokens?.accessToken ?? ''}` },
    });
    expect(tasks.status).toBe(200);

    // The link is single use.
    const again = await fetch(link.url);
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('already been used');

    // Tokens never travel through Temporal: the exchange workflow's history holds neither.
    const [attempt] = await stack.db.sql<
      { id: string }[]
    >`select id from oauth_attempts where link_id = ${link.id}`;
    const history = await historyText(stack.temporal, `connect/${attempt?.id ?? ''}`);
    expect(history).toContain(attempt?.id); // decoded: the input is there, the secrets are not
    expect(history).not.toContain(tokens?.accessToken);
    expect(history).not.toContain(tokens?.refreshToken);
    expect(new URL(result.url).searchParams.get('code')).toBeTruthy();
    expect(history).not.toContain(new URL(result.url).searchParams.get('code'));
    const logs = stack.api.logs.join('\n');
    expect(logs).not.toContain(tokens?.accessToken);
    expect(logs).not.toContain(new URL(result.url).searchParams.get('code'));
    expect(logs).not.toContain(link.url.slice(link.url.lastIndexOf('/') + 1));
    expect(logs).toContain('/connect/[token]');
  });

  it('sends the user to the redirect_url when one was given', async () => {
    const link = await newLink({
      user: 'u_redirect',
      app: 'acme',
      redirect_url: 'https://app.example.com/done?x=1',
    });
    const result = await walkConnectLink(link.url);
    expect(result.status).toBe(303);
    const [connection] = await connectionsOf('u_redirect');
    expect(result.redirectedTo?.origin).toBe('https://app.example.com');
    expect(Object.fromEntries(result.redirectedTo?.searchParams ?? [])).toEqual({
      x: '1',
      status: 'connected',
      connection_id: connection?.id,
      app: 'acme',
    });
  });

  it('brands the pages with the environment connect settings', async () => {
    await saveConnectSettings(
      stack.db.sql,
      stack.environmentId,
      {
        displayName: 'Northwind <Ops>',
        accentColor: '#0f766e',
        logoUrl: 'https://cdn.example.com/logo.png',
        supportUrl: 'https://help.example.com',
        theme: { mode: 'dark' },
      },
      'test',
    );
    const link = await newLink({ user: 'u_brand', app: 'acme' });
    const page = await (await fetch(link.url)).text();
    expect(page).toContain('Northwind &lt;Ops&gt;');
    expect(page).not.toContain('Northwind <Ops>');
    expect(page).toContain('#0f766e');
    expect(page).toContain('https://cdn.example.com/logo.png');
    expect(page).toContain('https://help.example.com');
  });

  it('points end users to the product and its support, never to Gatehouse', async () => {
    // The connect settings of the test above: Northwind <Ops>, support at help.example.com.
    const link = await newLink({ user: 'u_product', app: 'acme' });
    expect((await walkConnectLink(link.url)).status).toBe(200);
    const used = await fetch(link.url);
    expect(used.status).toBe(410);
    const page = await used.text();
    expect(page).toContain('ask Northwind &lt;Ops&gt; for a new link');
    expect(page).toMatch(
      /<a class="button" href="https:\/\/help\.example\.com\/"[^>]*>\s*Contact Northwind &lt;Ops&gt; support<\/a/,
    );
    expect(page).not.toMatch(/gatehouse/i);
  });

  it('ends an expired link on a branded error page, before and after the start', async () => {
    const link = await newLink({ user: 'u_expired', app: 'acme' });
    await stack.db
      .sql`update connect_links set expires_at = now() - interval '1 second' where id = ${link.id}`;
    const page = await fetch(link.url);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('This link has expired');
    expect((await fetch(`${link.url}/start`, { redirect: 'manual' })).status).toBe(410);
    expect(await connectionsOf('u_expired')).toEqual([]);
  });

  it('refuses forged links and forged state, storing nothing', async () => {
    const forged = await fetch(`${stack.config.api.publicUrl}/connect/${'x'.repeat(32)}`);
    expect(forged.status).toBe(404);
    expect(await forged.text()).toContain('This link is not valid');
    const callback = await fetch(
      `${stack.config.api.publicUrl}/connect/callback?code=abc&state=forged`,
    );
    expect(callback.status).toBe(400);
    expect(await callback.text()).toContain('could not be verified');
    const [count] = await stack.db.sql<
      { n: number }[]
    >`select count(*)::int as n from oauth_attempts where callback_params_sealed is not null`;
    expect(count?.n).toBe(0);
  });

  it('ends a denied consent on a branded page, keeps nothing, and lets the user try the link again', async () => {
    const link = await newLink({ user: 'u_deny', app: 'acme' });
    const denied = await walkConnectLink(link.url, { decision: 'deny' });
    expect(denied.status).toBe(403);
    expect(denied.html).toContain('Access was not granted');
    expect((await fetch(denied.url)).status).toBe(410); // that round trip is spent
    expect(await connectionsOf('u_deny')).toEqual([]);
    const allowed = await walkConnectLink(link.url);
    expect(allowed.status).toBe(200);
    expect(await connectionsOf('u_deny')).toHaveLength(1);
  });

  it('ends a failed token exchange on a branded page, keeps nothing, and does not use up the link', async () => {
    const link = await newLink({ user: 'u_exchange', app: 'acme' });
    const result = await walkConnectLink(link.url, {
      // The app stops trusting our client secret between consent and callback.
      beforeCallback: () =>
        stack.demo.registerClient({
          clientId: stack.client.clientId,
          clientSecret: 'rotated-elsewhere',
          redirectUris: [`${stack.config.api.publicUrl}/connect/callback`],
        }),
    });
    await stack.demo.registerClient({
      ...stack.client,
      redirectUris: [`${stack.config.api.publicUrl}/connect/callback`],
    });
    expect(result.status).toBe(502);
    expect(result.html).toContain('could not finish connecting');
    expect(await connectionsOf('u_exchange')).toEqual([]);
    expect((await walkConnectLink(link.url)).status).toBe(200);
  });

  it('shows the success page again to the browser that connected, and only to it', async () => {
    const link = await newLink({ user: 'u_reload', app: 'acme' });
    const { callback, jar } = await atCallback(link.url, { username: 'reload' });
    const done = await fetch(callback, { redirect: 'manual', headers: { cookie: jar.header() } });
    expect(done.status).toBe(200);
    const proofs = done.headers.getSetCookie().filter((c) => c.startsWith('gatehouse_connected_'));
    expect(proofs).toHaveLength(1);
    expect(proofs[0]?.split(/;\s*/).slice(1)).toEqual(
      expect.arrayContaining(['Max-Age=3600', 'Path=/connect', 'HttpOnly', 'SameSite=Lax']),
    );
    jar.store(done);

    // A reload in the same browser: the success page again, and still one connection.
    const reload = await returnToCallback(callback, jar);
    expect(reload.status).toBe(200);
    expect(reload.html).toContain('<span class="keep">Acme Tasks</span> is connected');
    expect(await connectionsOf('u_reload')).toHaveLength(1);

    // Another browser, or none, with the same URL: the link is used.
    for (const other of [new CookieJar(), null]) {
      const refused = await returnToCallback(callback, other);
      expect(refused.status).toBe(410);
      expect(refused.html).toContain('already been used');
    }
    // The proof belongs to its attempt: under another attempt's cookie name it proves nothing.
    const second = await newLink({ user: 'u_reload_other', app: 'acme' });
    const elsewhere = await atCallback(second.url, { username: 'reload-other' });
    expect((await returnToCallback(elsewhere.callback, elsewhere.jar)).status).toBe(200);
    const [proofName = ''] = jar.names().filter((name) => name.startsWith('gatehouse_connected_'));
    const [theirName = ''] = elsewhere.jar
      .names()
      .filter((name) => name.startsWith('gatehouse_connected_'));
    const moved = new CookieJar();
    moved.set(theirName, jar.get(proofName) ?? '');
    expect((await returnToCallback(elsewhere.callback, moved)).status).toBe(410);

    // Once the connection is gone, the page no longer says it is connected.
    await stack.db.sql`
      update connections set status = 'revoked'
      where connected_user_id = (select id from connected_users where external_id = 'u_reload')`;
    expect((await returnToCallback(callback, jar)).status).toBe(410);
  });

  it('replays of a completed callback are refused', async () => {
    const link = await newLink({ user: 'u_replay', app: 'acme' });
    const result = await walkConnectLink(link.url);
    expect(result.status).toBe(200);
    const replay = await fetch(result.url);
    expect(replay.status).toBe(410);
    expect(await connectionsOf('u_replay')).toHaveLength(1);
  });
});

describe('an OAuth attempt is bound to the browser that started it', () => {
  it('sets an HttpOnly, SameSite=Lax cookie on /connect for the 15 minutes of the attempt', async () => {
    const link = await newLink({ user: 'u_cookie', app: 'acme' });
    const start = await fetch(`${link.url}/start`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const cookies = start.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    const [cookie = ''] = cookies;
    expect(cookie).toMatch(/^gatehouse_connect_[A-Za-z0-9_-]{16}=[A-Za-z0-9_-]{43};/);
    const attributes = cookie.split(/;\s*/).slice(1);
    expect(attributes).toEqual(
      expect.arrayContaining(['Max-Age=900', 'Path=/connect', 'HttpOnly', 'SameSite=Lax']),
    );
    // PUBLIC_URL is plain http here; Secure is set for an https one (attempt-cookie.test.ts).
    expect(attributes).not.toContain('Secure');
  });

  it('refuses a callback without the cookie on a branded page and leaves the attempt unspent', async () => {
    const link = await newLink({ user: 'u_unbound', app: 'acme' });
    const { callback, jar } = await atCallback(link.url, { username: 'unbound' });
    const [name = ''] = bindingCookies(jar);
    const value = jar.get(name) ?? '';
    expect(value).not.toBe('');

    const refused = await returnToCallback(callback, null);
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('start again from the link you were given');
    expect(refused.html).toContain('browser_mismatch');
    expect(await attemptsOf(link.id)).toEqual([{ spent: false, parked: false }]);
    expect(await connectionsOf('u_unbound')).toEqual([]);

    // A made-up value under the attempt's cookie name is no better than none.
    const forged = new CookieJar();
    forged.set(name, 'A'.repeat(43));
    expect((await returnToCallback(callback, forged)).status).toBe(403);
    expect(await attemptsOf(link.id)).toEqual([{ spent: false, parked: false }]);

    // The browser that started it completes it as before, and its cookie is cleared.
    const done = await returnToCallback(callback, jar);
    expect(done.status).toBe(200);
    expect(done.html).toContain('is connected');
    expect(bindingCookies(jar)).toEqual([]);
    expect(await connectionsOf('u_unbound')).toHaveLength(1);
    expect(stack.api.logs.join('\n')).not.toContain(value);
  });

  it('does not let error=access_denied without the cookie spend the attempt', async () => {
    const link = await newLink({ user: 'u_burn', app: 'acme' });
    const { callback, jar } = await atCallback(link.url, { decision: 'deny' });
    expect(callback.searchParams.get('error')).toBe('access_denied');

    // Anyone holding the state alone (it is in the app's authorize URL) is refused.
    const burn = await returnToCallback(callback, null);
    expect(burn.status).toBe(403);
    expect(burn.html).toContain('browser_mismatch');
    expect(await attemptsOf(link.id)).toEqual([{ spent: false, parked: false }]);

    // The user's own denial, in the browser that started it, ends the attempt as before.
    const denied = await returnToCallback(callback, jar);
    expect(denied.status).toBe(403);
    expect(denied.html).toContain('Access was not granted');
    expect(await attemptsOf(link.id)).toEqual([{ spent: true, parked: false }]);
  });

  it('keeps several attempts in one browser apart, each with its own cookie', async () => {
    const first = await newLink({ user: 'u_tab_one', app: 'acme' });
    const second = await newLink({ user: 'u_tab_two', app: 'acme' });
    const jar = new CookieJar();
    const one = await atCallback(first.url, { jar, username: 'tabs' });
    const two = await atCallback(second.url, { jar, username: 'tabs' });
    expect(bindingCookies(jar)).toHaveLength(2);

    // Finished in the other order than started: each callback finds its own attempt's cookie.
    expect((await returnToCallback(two.callback, jar)).status).toBe(200);
    expect((await returnToCallback(one.callback, jar)).status).toBe(200);
    expect(await connectionsOf('u_tab_one')).toHaveLength(1);
    expect(await connectionsOf('u_tab_two')).toHaveLength(1);
    expect(bindingCookies(jar)).toEqual([]);
  });

  it('does not accept the cookie of one attempt for another', async () => {
    const mine = await newLink({ user: 'u_swap_mine', app: 'acme' });
    const theirs = await newLink({ user: 'u_swap_theirs', app: 'acme' });
    const own = await atCallback(mine.url, { username: 'swap-mine' });
    const other = await atCallback(theirs.url, { username: 'swap-theirs' });
    // Their callback with my cookies (a value of my attempt under my attempt's name).
    expect((await returnToCallback(other.callback, own.jar)).status).toBe(403);
    // And my value under their attempt's name.
    const [theirName = ''] = bindingCookies(other.jar);
    const [myName = ''] = bindingCookies(own.jar);
    const crossed = new CookieJar();
    crossed.set(theirName, own.jar.get(myName) ?? '');
    expect((await returnToCallback(other.callback, crossed)).status).toBe(403);
    expect(await attemptsOf(theirs.id)).toEqual([{ spent: false, parked: false }]);
    expect(await connectionsOf('u_swap_theirs')).toEqual([]);
  });
});
