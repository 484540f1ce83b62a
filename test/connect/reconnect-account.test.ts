import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  findConnectionById,
  markConnectionExpired,
  markConnectionRevoked,
} from '../../activities/db/connections.js';
import { reconnectLinkFor } from '../../api/connect/links.js';
import {
  consentThroughLink,
  returnToCallback,
  walkConnectLink,
} from '../../infra/demo-app/scripted-connect.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
});

interface Row {
  id: string;
  status: string;
  accessTokenSealed: string | null;
  refreshTokenSealed: string | null;
  accountIdSealed: string | null;
  revokedAt: Date | null;
  updatedAt: Date;
}

/** Every connection of the user, revoked ones included, oldest first. */
async function connectionsOf(user: string): Promise<Row[]> {
  return stack.db.sql<Row[]>`
    select c.id, c.status, c.access_token_sealed, c.refresh_token_sealed, c.account_id_sealed,
      c.revoked_at, c.updated_at
    from connections c join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} order by c.created_at`;
}

/** A new connection through the hosted flow, as `account` at the demo app. */
async function connect(user: string, account: string): Promise<string> {
  const link = (await (await createLink(stack, { user, app: 'acme' })).json()) as { url: string };
  expect((await walkConnectLink(link.url, { username: account })).status).toBe(200);
  const live = (await connectionsOf(user)).filter((c) => c.status !== 'revoked');
  expect(live).toHaveLength(1);
  return live[0]?.id ?? '';
}

async function reconnectUrl(id: string): Promise<string> {
  const connection = await findConnectionById(stack.db.sql, id);
  if (!connection) throw new Error(`no connection ${id}`);
  return (await reconnectLinkFor(stack.db.sql, stack.config, connection)).url;
}

/** Who the app says the user's connection acts as, through Gatehouse's proxy. */
async function accountThroughProxy(user: string): Promise<unknown> {
  const response = await fetch(`${stack.api.url}/v1/proxy/acme/me`, {
    headers: { authorization: `Bearer ${stack.key.key}`, 'service-user': user },
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe('a reconnect re-authorises the same account', () => {
  it('renews the connection in place when the same account comes back', async () => {
    const id = await connect('u_same', 'same-ann');
    await markConnectionExpired(stack.db.sql, id);
    const result = await walkConnectLink(await reconnectUrl(id), { username: 'same-ann' });
    expect(result.status).toBe(200);
    expect(await connectionsOf('u_same')).toEqual([
      expect.objectContaining({ id, status: 'active' }),
    ]);
    expect(await accountThroughProxy('u_same')).toEqual({ id: 'same-ann' });
  });

  it('refuses another account on a branded page and leaves the connection as it was', async () => {
    const id = await connect('u_swap', 'swap-ann');
    const url = await reconnectUrl(id);
    const [before] = await connectionsOf('u_swap');

    const refused = await walkConnectLink(url, { username: 'swap-mallory' });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('This is a different account');
    expect(refused.html).toContain('account_mismatch');
    // Same tokens, same account, not even touched.
    expect(await connectionsOf('u_swap')).toEqual([before]);
    expect(await accountThroughProxy('u_swap')).toEqual({ id: 'swap-ann' });

    // The link is not used up: the right account can still come back with it.
    expect((await walkConnectLink(url, { username: 'swap-ann' })).status).toBe(200);
    expect(await connectionsOf('u_swap')).toEqual([
      expect.objectContaining({ id, status: 'active' }),
    ]);
    expect((await fetch(url)).status).toBe(410);
  });

  it('refuses another account for an expired connection too, which stays expired', async () => {
    const id = await connect('u_swap_expired', 'expired-ann');
    await markConnectionExpired(stack.db.sql, id);
    const refused = await walkConnectLink(await reconnectUrl(id), { username: 'expired-bob' });
    expect(refused.status).toBe(409);
    expect(await connectionsOf('u_swap_expired')).toEqual([
      expect.objectContaining({ id, status: 'expired' }),
    ]);
  });

  it('does not revive a connection revoked while its reconnect was at the app', async () => {
    const id = await connect('u_revived', 'revived-ann');
    const reached = await consentThroughLink(await reconnectUrl(id), { username: 'revived-ann' });
    if ('refused' in reached) throw new Error('reconnect link refused');
    await markConnectionRevoked(stack.db.sql, id);
    const result = await returnToCallback(reached.callback, reached.jar);
    expect(result.status).toBe(410);
    expect(result.html).toContain('connection_revoked');
    expect(await connectionsOf('u_revived')).toEqual([
      expect.objectContaining({ id, status: 'revoked', accessTokenSealed: null }),
    ]);
  });

  it('takes the account of the next authorisation for a connection whose account is unknown', async () => {
    const id = await connect('u_legacy', 'legacy-ann');
    // As a connection made before the account was recorded.
    await stack.db.sql`update connections set account_id_sealed = null where id = ${id}`;
    expect((await walkConnectLink(await reconnectUrl(id), { username: 'legacy-bob' })).status).toBe(
      200,
    );
    expect(await accountThroughProxy('u_legacy')).toEqual({ id: 'legacy-bob' });
    // From then on it is known, and checked.
    const again = await walkConnectLink(await reconnectUrl(id), { username: 'legacy-ann' });
    expect(again.status).toBe(409);
    expect(await connectionsOf('u_legacy')).toEqual([
      expect.objectContaining({ id, status: 'active', accountIdSealed: expect.any(String) }),
    ]);
  });
});

describe('a new connect link for a user already connected to the app', () => {
  it('re-authorises the connection in place with the same account', async () => {
    const id = await connect('u_again', 'again-ann');
    expect(await connect('u_again', 'again-ann')).toBe(id);
    expect(await connectionsOf('u_again')).toHaveLength(1);
  });

  it('makes a new connection for another account and revokes the old one, keeping its row', async () => {
    const first = await connect('u_switch', 'switch-ann');
    const oldReconnect = await reconnectUrl(first);
    const second = await connect('u_switch', 'switch-bob');
    expect(second).not.toBe(first);
    expect(await connectionsOf('u_switch')).toEqual([
      expect.objectContaining({
        id: first,
        status: 'revoked',
        accessTokenSealed: null,
        refreshTokenSealed: null,
        revokedAt: expect.any(Date),
      }),
      expect.objectContaining({ id: second, status: 'active' }),
    ]);
    expect(await accountThroughProxy('u_switch')).toEqual({ id: 'switch-bob' });
    // The old connection's reconnect link died with it.
    const stale = await fetch(oldReconnect);
    expect(stale.status).toBe(410);
    expect(await stale.text()).toContain('connection_revoked');
  });
});
