// An app's token endpoint answering an `expires_in` no token has (1e308, a 30-digit integer, a
// negative number, a string, zero), through the real connect callback and a real refresh: never
// a 500. An absurdly long lifetime is clamped (the token is kept), zero is taken as not said
// (the catalog's default lifetime), and a negative or non-numeric one makes the answer malformed
// (openid-client refuses it): the branded page, nothing stored.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_ACCESS_TOKEN_LIFETIME_SECONDS } from '../../activities/oauth/token-lifetime.js';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
});

const SECOND = 1000;
const CLAMPED = MAX_ACCESS_TOKEN_LIFETIME_SECONDS * SECOND;
/** acme's `defaultAccessTokenTtlSeconds`, for an answer that says nothing usable. */
const ACME_DEFAULT = 3600 * SECOND;

async function expiryOf(user: string): Promise<{ id: string; expiresAt: Date | null } | null> {
  const [row] = await stack.db.sql<{ id: string; expiresAt: Date | null }[]>`
    select c.id, c.access_token_expires_at as expires_at from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} and c.status = 'active'`;
  return row ?? null;
}

/** Connects `user` to acme while the token endpoint says `expiresIn`; the callback's page. */
async function connectWith(user: string, expiresIn: string) {
  stack.demo.setTokenExpiresIn(expiresIn);
  try {
    const response = await createLink(stack, { user, app: 'acme' });
    expect(response.status).toBe(201);
    const { url } = (await response.json()) as { url: string };
    return await walkConnectLink(url, { username: user });
  } finally {
    stack.demo.setTokenExpiresIn(null);
  }
}

describe('a token answer at the connect callback whose expires_in is', () => {
  it.each([
    ['1e308', '1e308', CLAMPED],
    ['a 30-digit integer', '123456789012345678901234567890', CLAMPED],
    ['0', '0', ACME_DEFAULT],
  ])('%s connects, with a representable expiry', async (_case, expiresIn, lifetimeMs) => {
    const user = `u_${expiresIn.slice(0, 8)}`;
    const before = Date.now();
    const page = await connectWith(user, expiresIn);
    const after = Date.now();
    expect({ status: page.status, html: page.html }).toMatchObject({ status: 200 });
    const connection = await expiryOf(user);
    const expiresAt = connection?.expiresAt?.getTime() ?? NaN;
    expect(expiresAt).toBeGreaterThanOrEqual(before + lifetimeMs - SECOND);
    expect(expiresAt).toBeLessThanOrEqual(after + lifetimeMs);
  });

  it.each([
    ['-5', '-5'],
    ['a string that is no number', '"abc"'],
  ])('%s is refused as malformed on the branded page; nothing is stored', async (_case, value) => {
    const user = `u_bad_${String(value.length)}`;
    const page = await connectWith(user, value);
    expect(page.status).toBe(502);
    expect(page.html).toContain('We could not finish connecting');
    expect(await expiryOf(user)).toBeNull();
  });
});

describe('a token answer at a refresh whose expires_in is', () => {
  beforeAll(async () => {
    expect((await connectWith('u_refresh', '3600')).status).toBe(200);
  });

  it.each([
    ['1e308', '1e308', CLAMPED],
    ['a 30-digit integer', '123456789012345678901234567890', CLAMPED],
    ['0', '0', ACME_DEFAULT],
  ])('%s refreshes, with a representable expiry', async (_case, expiresIn, lifetimeMs) => {
    const connection = await expiryOf('u_refresh');
    if (!connection) throw new Error('no connection to refresh');
    stack.demo.setTokenExpiresIn(expiresIn);
    const before = Date.now();
    let response;
    try {
      response = await fetch(`${stack.api.url}/v1/connections/${connection.id}/refresh`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.key.key}` },
      });
    } finally {
      stack.demo.setTokenExpiresIn(null);
    }
    const after = Date.now();
    expect({ status: response.status, body: await response.json() }).toMatchObject({
      status: 200,
      body: { status: 'active' },
    });
    const expiresAt = (await expiryOf('u_refresh'))?.expiresAt?.getTime() ?? NaN;
    expect(expiresAt).toBeGreaterThanOrEqual(before + lifetimeMs - SECOND);
    expect(expiresAt).toBeLessThanOrEqual(after + lifetimeMs);
  });
});
