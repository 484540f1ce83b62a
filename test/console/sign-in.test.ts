import { beforeAll, describe, expect, it } from '@jest/globals';
import { createEnvironment } from '../../activities/db/environments.js';
import { setGroupRoles } from '../../activities/db/role-mappings.js';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import { walkSignIn } from '../support/identity-provider.js';
import { REFUSED_PORT } from '../support/refused-port.js';
import { stopsAfterAll } from '../support/stops.js';

let world: ConsoleStack;
const started = stopsAfterAll();

beforeAll(async () => {
  world = started.add(await startConsoleStack());
}, 600_000);

const SESSION = 'gatehouse_console_test';

/** The console's answer to this browser, as text. */
async function open(jar: CookieJar, path: string, init: RequestInit = {}) {
  const res = await world.fetchAs(jar, path, init);
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

function formTokenOf(page: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error(`no form token on the page:\n${page}`);
  return token;
}

function signOut(jar: CookieJar, csrf: string | null) {
  return open(jar, '/console/test/sign-out', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: csrf === null ? '' : new URLSearchParams({ csrf }).toString(),
  });
}

describe('signing in to the console', () => {
  it('signs a person in at the real provider and opens their inbox, named by the provider', async () => {
    const jar = await world.signIn('alice@example.com');
    expect(jar.get(SESSION)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const inbox = await open(jar, '/console/test/inbox');
    expect(inbox.status).toBe(200);
    expect(inbox.text).toContain('Alice Approver');
    expect(inbox.text).toContain('alice@example.com');
    const [person] = await world.stack.db.sql<
      { issuer: string; subject: string; groups: string[] }[]
    >`select issuer, subject, groups from people where email = 'alice@example.com'`;
    expect(person).toEqual({
      issuer: world.idp.issuer,
      subject: 'dev-alice',
      groups: ['approvers'],
    });
  });

  it('sets the session cookie HttpOnly and SameSite=Lax, and not Secure on loopback', async () => {
    const jar = new CookieJar();
    const callback = await walkSignIn(new URL(`${world.base}/sign-in`), 'alice@example.com', {
      jar,
      isDestination: (url) => url.pathname === '/console/callback',
    });
    if (!('reached' in callback)) throw new Error('sign-in refused');
    const res = await world.fetchAs(jar, callback.reached.href);
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((line) => line.startsWith(`${SESSION}=`));
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/; Secure/i);
    // The session is kept server-side: the table holds a hash, never the cookie's value.
    const value = jar.get(SESSION) ?? '';
    const rows = await world.stack.db.sql`
      select 1 from console_sessions where token_hash = ${Buffer.from(value)}`;
    expect(rows).toHaveLength(0);
  });

  it('sends a visitor without a session to sign in, and back to the page asked for', async () => {
    const visitor = await open(new CookieJar(), '/console/test/inbox');
    expect(visitor.status).toBe(303);
    expect(visitor.location).toBe(`${world.base}/sign-in?return_to=%2Fconsole%2Ftest%2Finbox`);
    const jar = new CookieJar();
    const landed = await world.signIn('alice@example.com', jar);
    expect(landed.get(SESSION)).toBeDefined();
  });

  it('refuses a person whose groups hold no role here, and opens no session', async () => {
    const jar = new CookieJar();
    const callback = await walkSignIn(new URL(`${world.base}/sign-in`), 'nobody@example.com', {
      jar,
      isDestination: (url) => url.pathname === '/console/callback',
    });
    if (!('reached' in callback)) throw new Error('the provider refused Nora');
    const answer = await open(jar, callback.reached.href);
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('You have no role in this environment');
    expect(jar.get(SESSION)).toBeUndefined();
  });

  it('gives a role to one person by email, for providers that send no groups', async () => {
    await setGroupRoles(
      world.stack.db.sql,
      world.stack.environmentId,
      'person:nobody@example.com',
      ['approver'],
    );
    try {
      const jar = await world.signIn('nobody@example.com');
      const inbox = await open(jar, '/console/test/inbox');
      expect(inbox.status).toBe(200);
      expect(inbox.text).toContain('Nora Nogroup');
    } finally {
      await setGroupRoles(
        world.stack.db.sql,
        world.stack.environmentId,
        'person:nobody@example.com',
        [],
      );
    }
  });

  it('ignores an agent key at /console: keys are for machines, and open no page', async () => {
    const res = await fetch(`${world.base}/inbox`, {
      redirect: 'manual',
      headers: { authorization: `Bearer ${world.stack.key.key}` },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('/console/test/sign-in');
    const body = await res.text();
    expect(body).not.toContain('Inbox');
  });

  it('refuses a callback that this browser did not start (a link sent to someone else)', async () => {
    const attacker = new CookieJar();
    const callback = await walkSignIn(new URL(`${world.base}/sign-in`), 'olivia@example.com', {
      jar: attacker,
      isDestination: (url) => url.pathname === '/console/callback',
    });
    if (!('reached' in callback)) throw new Error('sign-in refused');
    // The victim's browser holds no sign-in cookie of this attempt.
    const victim = new CookieJar();
    const answer = await open(victim, callback.reached.href);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('This sign-in did not start here');
    expect(victim.get(SESSION)).toBeUndefined();
    // The refusal took nothing from the browser that did start it; and used once, the answer
    // signs nobody in again.
    const own = await open(attacker, callback.reached.href);
    expect(own.status).toBe(303);
    const again = await open(new CookieJar(), callback.reached.href);
    expect(again.status).toBe(400);
    attacker.set(
      'gatehouse_sign_in',
      new URL(callback.reached.href).searchParams.get('state') ?? '',
    );
    attacker.delete(SESSION);
    const replayed = await open(attacker, callback.reached.href);
    expect(replayed.status).toBe(400);
    expect(replayed.text).toContain('This sign-in has expired');
    expect(attacker.get(SESSION)).toBeUndefined();
  });

  it('refuses a session cookie of this environment at another environment’s console', async () => {
    const other = await createEnvironment(world.stack.db.sql, 'other');
    await setGroupRoles(world.stack.db.sql, other.id, 'approvers', ['approver']);
    const jar = await world.signIn('alice@example.com');
    const stolen = new CookieJar();
    stolen.set('gatehouse_console_other', jar.get(SESSION) ?? '');
    const answer = await open(stolen, '/console/other/inbox');
    expect(answer.status).toBe(303);
    expect(answer.location).toContain('/console/other/sign-in');
  });

  it('signs out with the form token, and the old cookie opens nothing afterwards', async () => {
    const jar = await world.signIn('alice@example.com');
    const cookie = jar.get(SESSION) ?? '';
    const inbox = await open(jar, '/console/test/inbox');
    const csrf = formTokenOf(inbox.text);

    // Without the token (a forged form), nothing happens: the session lives on.
    const forged = await signOut(jar, null);
    expect(forged.status).toBe(403);
    expect((await open(jar, '/console/test/inbox')).status).toBe(200);

    const out = await signOut(jar, csrf);
    expect(out.status).toBe(200);
    expect(out.text).toContain('You are signed out');
    expect(jar.get(SESSION)).toBeUndefined();

    const replayed = new CookieJar();
    replayed.set(SESSION, cookie);
    const after = await open(replayed, '/console/test/inbox');
    expect(after.status).toBe(303);
    expect(after.location).toContain('/sign-in');
  });

  it('refuses a form posted from another origin even with the token', async () => {
    const jar = await world.signIn('alice@example.com');
    const csrf = formTokenOf((await open(jar, '/console/test/inbox')).text);
    const answer = await open(jar, '/console/test/sign-out', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
      },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(answer.status).toBe(403);
    expect((await open(jar, '/console/test/inbox')).status).toBe(200);
  });

  it('ends a session idle for longer than the idle lifetime, and one past its absolute end', async () => {
    const idle = await world.signIn('alice@example.com');
    await world.stack.db.sql`
      update console_sessions set last_seen_at = now() - interval '61 minutes'
      where token_hash = sha256(${idle.get(SESSION) ?? ''}::bytea)`;
    expect((await open(idle, '/console/test/inbox')).status).toBe(303);

    const old = await world.signIn('alice@example.com');
    await world.stack.db.sql`
      update console_sessions set expires_at = now() - interval '1 second'
      where token_hash = sha256(${old.get(SESSION) ?? ''}::bytea)`;
    expect((await open(old, '/console/test/inbox')).status).toBe(303);
  });

  it('drops sessions a day past their end at the next sign-in, and keeps younger ones', async () => {
    const old = await world.signIn('alice@example.com');
    const young = await world.signIn('alice@example.com');
    const hash = (jar: CookieJar) => world.stack.db.sql`sha256(${jar.get(SESSION) ?? ''}::bytea)`;
    await world.stack.db.sql`
      update console_sessions set expires_at = now() - interval '25 hours'
      where token_hash = ${hash(old)}`;
    await world.stack.db.sql`
      update console_sessions set expires_at = now() - interval '23 hours'
      where token_hash = ${hash(young)}`;
    await world.signIn('bob@example.com');
    const left = await world.stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from console_sessions
      where token_hash in (${hash(old)}, ${hash(young)})`;
    expect(left[0]?.n).toBe(1);
  });

  it('applies a role taken away to sessions already open', async () => {
    const jar = await world.signIn('olivia@example.com');
    // Olivia operates and administers, and decides nothing (separation of duties): the inbox is
    // not hers.
    const inbox = await open(jar, '/console/test/inbox');
    expect(inbox.status).toBe(403);
    expect(inbox.text).toContain('Not one of your tasks');
    const alice = await world.signIn('alice@example.com');
    expect((await open(alice, '/console/test/inbox')).status).toBe(200);
    await setGroupRoles(world.stack.db.sql, world.stack.environmentId, 'approvers', []);
    try {
      expect((await open(alice, '/console/test/inbox')).status).toBe(403);
    } finally {
      await setGroupRoles(world.stack.db.sql, world.stack.environmentId, 'approvers', ['approver']);
    }
  });
});

describe('signing in while the identity provider is down', () => {
  let down: ConsoleStack;
  const stops = stopsAfterAll();

  beforeAll(async () => {
    down = stops.add(
      await startConsoleStack({
        env: { OIDC_ISSUER_URL: `http://127.0.0.1:${String(REFUSED_PORT)}` },
      }),
    );
  }, 600_000);

  it('answers a page that says so (503, Retry-After), not a 500, and again while it is down', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await fetch(`${down.base}/sign-in`, { redirect: 'manual' });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('The identity provider did not answer');
    }
  });
});
