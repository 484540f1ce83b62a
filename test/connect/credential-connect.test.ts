import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  applyRequestAuth,
  credentialForCall,
  noteCredentialAnswer,
  requestAuthOf,
  withRequestAuth,
} from '../../activities/credentials/request-auth.js';
import { saveCredentialConnection } from '../../activities/db/credential-connections.js';
import {
  CredentialAppRefused,
  removeCredentialApp,
  saveCredentialApp,
} from '../../activities/db/credential-apps.js';
import { refreshThroughWorkflow } from '../../activities/connections/refresh-workflow.js';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { CONTENT_SECURITY_POLICY } from '../../api/connect/pages/index.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { historyText } from '../support/workflow-history.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';
import {
  enterCredential,
  openForm,
  postForm as post,
  type ShownForm,
} from '../support/credential-form.js';

let stack: ConnectStack;
let standardKey: TestKey;
const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
  standardKey = await createTestKey(stack.db.sql, { env: 'test', access: 'standard' });
  const declare = (id: string, scheme: Parameters<typeof saveCredentialApp>[1]['scheme']) =>
    saveCredentialApp(stack.db.sql, {
      environmentId: stack.environmentId,
      id,
      name: `${id} service`,
      scheme,
      hint: 'Find it under Settings, then API.',
      declaredBy: 'test',
    });
  await declare('keyed', { scheme: 'api_key', in: 'header', name: 'X-Api-Key' });
  await declare('querykeyed', { scheme: 'api_key', in: 'query', name: 'api_key' });
  await declare('bearing', { scheme: 'bearer' });
  await declare('basics', { scheme: 'basic' });
});

/** A fresh secret, so no test finds another's. */
const secretOf = (label: string) => `${label}_${randomBytes(18).toString('base64url')}`;

async function newLink(user: string, app: string, redirect = true): Promise<string> {
  const response = await createLink(stack, {
    user,
    app,
    ...(redirect ? { redirect_url: 'https://product.example/done' } : {}),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { url: string }).url;
}

/** Connects `user` to `app` with `body` through a new link: the connection id. */
async function connect(user: string, app: string, body: Record<string, string>): Promise<string> {
  const id = await enterCredential(await newLink(user, app), body);
  expect(id).not.toBe('');
  return id;
}

async function exportWith(key: string, id: string): Promise<Response> {
  return fetch(`${stack.api.url}/v1/connections/${id}/export`, {
    headers: { authorization: `Bearer ${key}` },
  });
}

/** Every stored trace of the connection: its row, as Postgres prints it. */
async function rowText(id: string): Promise<string> {
  const [row] = await stack.db.sql<{ text: string }[]>`
    select row_to_json(c)::text as text from connections c where id = ${id}`;
  return row?.text ?? '';
}

async function connectionsOf(user: string) {
  return stack.db.sql<{ id: string; status: string; authKind: string }[]>`
    select c.id, c.status, c.auth_kind from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} order by c.created_at`;
}

describe('the credential page', () => {
  it('is branded, scriptless, bound to this browser, and asks for the declared credential', async () => {
    const jar = new CookieJar();
    const form = await openForm(await newLink('u_page', 'keyed'), jar);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(form.headers.get('cache-control')).toBe('no-store');
    // The origin, so the post has one to check (under no-referrer a browser sends Origin: null).
    expect(form.headers.get('referrer-policy')).toBe('strict-origin');
    expect(form.html).not.toMatch(/<script/i);
    expect(form.html).toContain('Connect <span class="keep">keyed service</span>');
    expect(form.html).toContain('API key');
    expect(form.html).toContain('Find it under Settings, then API.');
    expect(form.html).toMatch(/<form method="post"[^>]*autocomplete="off"/);
    expect(form.html).toMatch(/name="secret"\s+type="password"\s+autocomplete="off"/);
    expect(form.html).not.toContain('name="username"');
    expect(form.fields.csrf).not.toBe('');
    expect(jar.names()).toEqual([`gatehouse_connect_${form.fields.attempt}`]);

    const basic = await openForm(await newLink('u_page', 'basics'), new CookieJar());
    expect(basic.html).toContain('name="username"');
    expect(basic.html).toContain('name="password"');
    expect(basic.html).not.toContain('name="secret"');
  });
});

describe('connecting with an API key', () => {
  it('stores it sealed, exports it to full keys only, and it goes out in the declared header', async () => {
    const key = secretOf('ak');
    const id = await connect('u_key', 'keyed', { secret: key });
    expect(await connectionsOf('u_key')).toEqual([
      { id, status: 'active', authKind: 'credential' },
    ]);
    // The row holds no clear key, in any column.
    const row = await rowText(id);
    expect(row).toContain('"credential_scheme":"api_key"');
    expect(row).toContain('"credential_name":"X-Api-Key"');
    expect(row).not.toContain(key);

    const shown = await fetch(`${stack.api.url}/v1/connections/${id}`, {
      headers: { authorization: `Bearer ${stack.key.key}` },
    });
    const connection = (await shown.json()) as Record<string, unknown>;
    expect(connection.auth_kind).toBe('credential');
    expect(JSON.stringify(connection)).not.toContain(key);

    const exported = await exportWith(stack.key.key, id);
    expect(exported.status).toBe(200);
    expect(await exported.json()).toEqual({
      id,
      app: 'keyed',
      auth_kind: 'credential',
      credential: { scheme: 'api_key', in: 'header', name: 'X-Api-Key', key },
    });
    const refused = await exportWith(standardKey.key, id);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'insufficient_access',
    );

    const call = await credentialForCall(stack.db.sql, stack.config.encryption, id);
    expect(call).toEqual({ kind: 'ready', auth: { headers: { 'x-api-key': key }, query: [] } });

    // Nowhere else: not in the API's log lines (nor the link's token), not in the audit trail.
    const logs = stack.api.logs.join('\n');
    expect(logs).not.toContain(key);
    expect(logs).toContain('credential connection stored');
    expect(logs).toContain('/connect/[token]/credential');
    const [audit] = await stack.db.sql<{ found: number }[]>`
      select count(*)::int as found from audit_events
      where request::text like ${`%${key}%`} or coalesce(response::text, '') like ${`%${key}%`}`;
    expect(audit?.found).toBe(0);
  });

  it('in the query, as the declaration says', async () => {
    const key = secretOf('qk');
    const id = await connect('u_query', 'querykeyed', { secret: key });
    expect(await credentialForCall(stack.db.sql, stack.config.encryption, id)).toEqual({
      kind: 'ready',
      auth: { headers: {}, query: [['api_key', key]] },
    });
  });

  it('without a redirect URL ends on the success page', async () => {
    const jar = new CookieJar();
    const form = await openForm(await newLink('u_success', 'keyed', false), jar);
    const { response, html } = await post(form, jar, { secret: secretOf('sk') });
    expect(response.status).toBe(200);
    expect(html).toContain('keyed service');
    expect(jar.names()).toEqual([]);
    expect(await connectionsOf('u_success')).toHaveLength(1);
  });
});

describe('bearer and basic credentials', () => {
  it('a bearer token goes out as Authorization: Bearer', async () => {
    const token = secretOf('bt');
    const id = await connect('u_bearer', 'bearing', { secret: token });
    expect(await rowText(id)).not.toContain(token);
    expect(
      ((await (await exportWith(stack.key.key, id)).json()) as { credential: unknown }).credential,
    ).toEqual({ scheme: 'bearer', token });
    expect(await credentialForCall(stack.db.sql, stack.config.encryption, id)).toEqual({
      kind: 'ready',
      auth: { headers: { authorization: `Bearer ${token}` }, query: [] },
    });
  });

  it('a username and password go out as Authorization: Basic, UTF-8 encoded', async () => {
    const password = `pässwörd ${secretOf('pw')}`;
    const id = await connect('u_basic', 'basics', { username: 'ada@example.com', password });
    const row = await rowText(id);
    expect(row).not.toContain(password);
    expect(row).not.toContain('ada@example.com');
    expect(
      ((await (await exportWith(stack.key.key, id)).json()) as { credential: unknown }).credential,
    ).toEqual({ scheme: 'basic', username: 'ada@example.com', password });
    const basic = Buffer.from(`ada@example.com:${password}`, 'utf8').toString('base64');
    expect(await credentialForCall(stack.db.sql, stack.config.encryption, id)).toEqual({
      kind: 'ready',
      auth: { headers: { authorization: `Basic ${basic}` }, query: [] },
    });
    expect(stack.api.logs.join('\n')).not.toContain(password);
  });
});

describe('hostile input', () => {
  /** Posts `body` to a fresh link's form; the link is checked unspent and nothing stored after. */
  async function refusedWith(
    user: string,
    app: string,
    body: Record<string, string>,
    tamper: (form: ShownForm, jar: CookieJar) => Promise<CookieJar> | CookieJar = (_, jar) => jar,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; html: string; retry: () => Promise<number> }> {
    const jar = new CookieJar();
    const form = await openForm(await newLink(user, app), jar);
    const sender = await tamper(form, jar);
    const { response, html } = await post(form, sender, body, headers);
    expect(await connectionsOf(user)).toEqual([]);
    return {
      status: response.status,
      html,
      // The link was not spent: the right browser can still connect with it.
      retry: async () => (await post(form, jar, { secret: secretOf('ok') })).response.status,
    };
  }

  it('a key with CR LF (a header split) is refused with the page again, 400', async () => {
    const key = `${secretOf('crlf')}\r\nX-Injected: yes`;
    const refused = await refusedWith('u_crlf', 'keyed', { secret: key });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('no spaces, line breaks or other characters');
    expect(refused.html).toContain('name="secret"');
    expect(refused.html).not.toContain('X-Injected');
    expect(await refused.retry()).toBe(303);
  });

  it('a key over 4 KiB, or a body far over it, is refused, 400', async () => {
    const long = await refusedWith('u_long', 'keyed', { secret: 'k'.repeat(4097) });
    expect(long.status).toBe(400);
    expect(long.html).toContain('too long');
    expect(await long.retry()).toBe(303);

    const huge = await refusedWith('u_huge', 'keyed', { secret: 'k'.repeat(1024 * 1024) });
    expect(huge.status).toBe(400);
    expect(huge.html).toContain('far too long');
  });

  it('an empty key, or a basic username with a colon, is refused, 400', async () => {
    const empty = await refusedWith('u_empty', 'bearing', { secret: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.html).toContain('Enter your access token.');
    const colon = await refusedWith('u_colon', 'basics', { username: 'a:b', password: 'x' });
    expect(colon.status).toBe(400);
    expect(colon.html).toContain('may not contain a colon');
    const newline = await refusedWith('u_pwnl', 'basics', { username: 'a', password: 'x\ny' });
    expect(newline.status).toBe(400);
  });

  it('a form without its token, or with another link’s, is refused, 403', async () => {
    const missing = await refusedWith('u_nocsrf', 'keyed', { secret: secretOf('x'), csrf: '' });
    expect(missing.status).toBe(403);
    expect(missing.html).toContain('form_invalid');
    expect(await missing.retry()).toBe(303);

    // A form shown for another link: its token is bound to that link.
    const other = await openForm(await newLink('u_other_link', 'keyed'), new CookieJar());
    const swapped = await refusedWith('u_swapped', 'keyed', {
      secret: secretOf('x'),
      csrf: other.fields.csrf,
    });
    expect(swapped.status).toBe(403);
  });

  it('another browser cannot send the form of an attempt it did not start, 403', async () => {
    // Without the attempt's cookie.
    const bare = await refusedWith(
      'u_bare',
      'keyed',
      { secret: secretOf('x') },
      () => new CookieJar(),
    );
    expect(bare.status).toBe(403);
    expect(await bare.retry()).toBe(303);
    // With a cookie of its own for the same reference: not the secret the token was made for.
    const forged = await refusedWith('u_forged', 'keyed', { secret: secretOf('x') }, (form) => {
      const other = new CookieJar();
      other.set(`gatehouse_connect_${form.fields.attempt}`, randomBytes(32).toString('base64url'));
      return other;
    });
    expect(forged.status).toBe(403);
    // Another user's attempt: a browser that opened its own link sends the form of the first.
    const crossed = await refusedWith('u_crossed', 'keyed', { secret: secretOf('x') }, async () => {
      const intruder = new CookieJar();
      await openForm(await newLink('u_intruder', 'keyed'), intruder);
      return intruder;
    });
    expect(crossed.status).toBe(403);
    expect(await connectionsOf('u_intruder')).toEqual([]);
  });

  it('a post from another site is refused, 403', async () => {
    const refused = await refusedWith('u_site', 'keyed', { secret: secretOf('x') }, undefined, {
      origin: 'https://evil.example',
    });
    expect(refused.status).toBe(403);
    const fetched = await refusedWith('u_site2', 'keyed', { secret: secretOf('x') }, undefined, {
      'sec-fetch-site': 'cross-site',
    });
    expect(fetched.status).toBe(403);
  });

  it('a used link stores nothing more', async () => {
    const jar = new CookieJar();
    const url = await newLink('u_twice', 'keyed');
    const form = await openForm(url, jar);
    expect((await post(form, jar, { secret: secretOf('one') })).response.status).toBe(303);
    const again = await post(form, jar, { secret: secretOf('two') });
    expect(again.response.status).toBe(410);
    expect((await openForm(url, new CookieJar())).status).toBe(410);
  });
});

describe('reconnecting', () => {
  it('a new link replaces the credential in place, a reconnect link too', async () => {
    const first = secretOf('first');
    const id = await connect('u_again', 'keyed', { secret: first });
    const second = secretOf('second');
    expect(await connect('u_again', 'keyed', { secret: second })).toBe(id);
    const exported = (await (await exportWith(stack.key.key, id)).json()) as {
      credential: { key: string };
    };
    expect(exported.credential.key).toBe(second);
    expect(await rowText(id)).not.toContain(second);

    // The app refused the key (401): the connection needs the user again.
    expect(await noteCredentialAnswer(stack.db.sql, id, 403)).toBe(false);
    expect(await noteCredentialAnswer(stack.db.sql, id, 401)).toBe(true);
    expect(await credentialForCall(stack.db.sql, stack.config.encryption, id)).toEqual({
      kind: 'unusable',
      status: 'expired',
    });
    const expired = await exportWith(stack.key.key, id);
    expect(expired.status).toBe(409);
    const envelope = (await expired.json()) as { error: { code: string; reconnect_url: string } };
    expect(envelope.error.code).toBe('connection_expired');

    const jar = new CookieJar();
    const form = await openForm(envelope.error.reconnect_url, jar);
    expect(form.status).toBe(200);
    const third = secretOf('third');
    const { response } = await post(form, jar, { secret: third });
    // A reconnect link has no redirect URL: the success page.
    expect(response.status).toBe(200);
    expect(await connectionsOf('u_again')).toEqual([
      { id, status: 'active', authKind: 'credential' },
    ]);
    const renewed = (await (await exportWith(stack.key.key, id)).json()) as {
      credential: { key: string };
    };
    expect(renewed.credential.key).toBe(third);
  });

  it('nothing to refresh (409); revoking erases the credential', async () => {
    const key = secretOf('rv');
    const id = await connect('u_revoke', 'keyed', { secret: key });
    const refresh = await fetch(`${stack.api.url}/v1/connections/${id}/refresh`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key.key}` },
    });
    expect(refresh.status).toBe(409);
    // Nor does the refresh workflow, asked directly, expire it for want of a refresh token.
    const forced = await refreshThroughWorkflow(stack.temporal, stack.config.temporal.taskQueue, {
      connectionId: id,
      seenRefreshCount: 0,
      force: true,
    });
    expect(forced).toMatchObject({ status: 'active', refreshed: false });
    expect((await connectionsOf('u_revoke'))[0]?.status).toBe('active');
    const revoked = await fetch(`${stack.api.url}/v1/connections/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${stack.key.key}` },
    });
    expect(revoked.status).toBe(200);
    const [row] = await stack.db.sql<{ status: string; sealed: string | null }[]>`
      select status, credential_sealed as sealed from connections where id = ${id}`;
    expect(row).toEqual({ status: 'revoked', sealed: null });
    expect(await credentialForCall(stack.db.sql, stack.config.encryption, id)).toEqual({
      kind: 'unusable',
      status: 'revoked',
    });
    // The revocation's workflow carried the connection's id, never its credential.
    const history = await historyText(stack.temporal, `revoke/${id}`);
    expect(history).toContain(id);
    expect(history).not.toContain(key);
  });
});

describe('declarations', () => {
  it('refuse an id of the catalog and a header that cannot carry a key', async () => {
    const base = { environmentId: stack.environmentId, name: 'x', hint: null, declaredBy: 'test' };
    await expect(
      saveCredentialApp(stack.db.sql, { ...base, id: 'acme', scheme: { scheme: 'bearer' } }),
    ).rejects.toThrow(CredentialAppRefused);
    await expect(
      saveCredentialApp(stack.db.sql, {
        ...base,
        id: 'hosty',
        scheme: { scheme: 'api_key', in: 'header', name: 'Host' },
      }),
    ).rejects.toThrow(CredentialAppRefused);
    await expect(
      saveCredentialApp(stack.db.sql, {
        ...base,
        id: 'splitty',
        scheme: { scheme: 'api_key', in: 'header', name: 'X-Key\r\nX-Other' },
      }),
    ).rejects.toThrow(CredentialAppRefused);
  });

  it('withdrawn by their declarer, revoke the app’s connections and refuse new links', async () => {
    await saveCredentialApp(stack.db.sql, {
      environmentId: stack.environmentId,
      id: 'gone',
      name: 'Gone',
      scheme: { scheme: 'bearer' },
      hint: null,
      declaredBy: 'test',
    });
    const id = await connect('u_gone', 'gone', { secret: secretOf('gone') });
    expect(
      await removeCredentialApp(stack.db.sql, stack.environmentId, 'gone', 'other'),
    ).toBeNull();
    expect(await removeCredentialApp(stack.db.sql, stack.environmentId, 'gone', 'test')).toEqual({
      revokedConnections: 1,
    });
    const [row] = await stack.db.sql<{ status: string; sealed: string | null }[]>`
      select status, credential_sealed as sealed from connections where id = ${id}`;
    expect(row).toEqual({ status: 'revoked', sealed: null });
    const link = await createLink(stack, { user: 'u_gone', app: 'gone' });
    expect(link.status).toBe(400);
  });
});

describe('presenting a credential', () => {
  it('replaces a header of the same name whatever its case, and appends to the query', () => {
    const sent = withRequestAuth(
      new URL('https://api.example/v1/items?page=2'),
      { 'X-API-KEY': 'from the caller', accept: 'application/json' },
      requestAuthOf({
        scheme: { scheme: 'api_key', in: 'header', name: 'X-Api-Key' },
        secret: { scheme: 'api_key', key: 'k1' },
      }),
    );
    expect(sent.headers).toEqual({ accept: 'application/json', 'x-api-key': 'k1' });
    const query = withRequestAuth(
      new URL('https://api.example/v1/items?page=2'),
      {},
      requestAuthOf({
        scheme: { scheme: 'api_key', in: 'query', name: 'api_key' },
        secret: { scheme: 'api_key', key: 'k&2=' },
      }),
    );
    expect(query.url.href).toBe('https://api.example/v1/items?page=2&api_key=k%262%3D');

    // A request that already names the parameter or header (a call's input): the credential wins.
    const headers = new Headers({ 'x-api-key': 'input' });
    const params = new URLSearchParams('api_key=input&page=1');
    applyRequestAuth(
      requestAuthOf({
        scheme: { scheme: 'api_key', in: 'query', name: 'api_key' },
        secret: { scheme: 'api_key', key: 'k3' },
      }),
      headers,
      params,
    );
    expect(params.toString()).toBe('api_key=k3&page=1');
    applyRequestAuth(
      requestAuthOf({ scheme: { scheme: 'bearer' }, secret: { scheme: 'bearer', token: 't' } }),
      headers,
      params,
    );
    expect([...headers]).toEqual([
      ['authorization', 'Bearer t'],
      ['x-api-key', 'input'],
    ]);
  });

  it('refuses a stored secret the page would have refused (a row written around it)', async () => {
    const [user] = await stack.db.sql<{ id: string }[]>`
      select id from connected_users where external_id = 'u_key'`;
    const saved = await stack.db.sql.begin((tx) =>
      saveCredentialConnection(tx, stack.config.encryption, {
        environmentId: stack.environmentId,
        connectedUserId: user?.id ?? '',
        app: 'bearing',
        scheme: { scheme: 'bearer' },
        secret: { scheme: 'bearer', token: 'abc\r\nX-Injected: yes' },
        grantedScopes: ['read'],
      }),
    );
    if (saved.kind !== 'saved') throw new Error('not saved');
    await expect(
      credentialForCall(stack.db.sql, stack.config.encryption, saved.connection.id),
    ).rejects.toThrow('cannot be sent');
    expect(() =>
      requestAuthOf({
        scheme: { scheme: 'api_key', in: 'header', name: 'Content-Length' },
        secret: { scheme: 'api_key', key: 'k' },
      }),
    ).toThrow('cannot be sent');
  });

  it('finds no credential on an OAuth connection', async () => {
    const oauth = await stack.db.sql<{ id: string }[]>`
      insert into connections (id, environment_id, connected_user_id, app, status)
      select gen_random_uuid(), ${stack.environmentId}, id, 'acme', 'active'
      from connected_users where external_id = 'u_key'
      returning id`;
    expect(
      await credentialForCall(stack.db.sql, stack.config.encryption, oauth[0]?.id ?? ''),
    ).toEqual({ kind: 'unusable', status: 'missing' });
  });
});
