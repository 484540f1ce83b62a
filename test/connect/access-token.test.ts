import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  validAccessToken,
  type AccessTokenDeps,
} from '../../activities/connections/access-token.js';
import { refreshThroughWorkflow } from '../../activities/connections/refresh-workflow.js';
import { findConnectionById } from '../../activities/db/connections.js';
import { reconnectLinkFor } from '../../api/connect/links.js';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

let stack: ConnectStack;
let deps: AccessTokenDeps;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
  deps = { sql: stack.db.sql, config: stack.config, temporal: stack.temporal };
});

/** A real connection made through the hosted flow, as `username` at the demo app. */
async function connect(user: string, username: string): Promise<string> {
  const link = (await (await createLink(stack, { user, app: 'acme' })).json()) as { url: string };
  expect((await walkConnectLink(link.url, { username })).status).toBe(200);
  const [row] = await stack.db.sql<{ id: string }[]>`
    select c.id from connections c join connected_users u on u.id = c.connected_user_id where u.external_id = ${user}`;
  if (!row) throw new Error('no connection');
  return row.id;
}

const expireNow = (id: string) =>
  stack.db.sql`update connections set access_token_expires_at = now() where id = ${id}`;

async function tasksStatus(token: string): Promise<number> {
  return (await fetch(`${stack.demo.url}/tasks`, { headers: { authorization: `Bearer ${token}` } }))
    .status;
}

describe('a valid access token for a connection', () => {
  it('hands out the stored token while it is fresh, without asking the app', async () => {
    const id = await connect('u_fresh', 'fresh');
    stack.demo.resetStats();
    const first = await validAccessToken(deps, id);
    const second = await validAccessToken(deps, id);
    expect(first.ok && second.ok && first.accessToken === second.accessToken).toBe(true);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(0);
  });

  it('refreshes a token that expires within 60 seconds, and the new one works at the app', async () => {
    const id = await connect('u_stale', 'stale');
    await expireNow(id);
    stack.demo.resetStats();
    const result = await validAccessToken(deps, id);
    if (!result.ok) throw new Error(`no token: ${result.status}`);
    expect(await tasksStatus(result.accessToken)).toBe(200);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(1);
    const connection = await findConnectionById(stack.db.sql, id);
    expect(connection?.refreshCount).toBe(1);
    expect(connection?.lastRefreshedAt).not.toBeNull();
    expect(connection?.accessTokenExpiresAt?.getTime()).toBeGreaterThan(Date.now() + 60_000);
  });

  it('makes 20 concurrent callers of a stale connection share one token request', async () => {
    const id = await connect('u_storm', 'storm');
    await expireNow(id);
    stack.demo.resetStats();
    const results = await Promise.all(Array.from({ length: 20 }, () => validAccessToken(deps, id)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(new Set(results.map((r) => (r.ok ? r.accessToken : ''))).size).toBe(1);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(1);
  });

  it('lets 20 concurrent forced refreshes (a burst of 401s) share one token request', async () => {
    const id = await connect('u_burst', 'burst');
    stack.demo.resetStats();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => validAccessToken(deps, id, { force: true })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(new Set(results.map((r) => r.ok && r.accessToken)).size).toBe(1);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(1);
    // A forced refresh asked after that one completed is a new token request.
    await validAccessToken(deps, id, { force: true });
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(2);

    // A caller that read the connection before the last refresh completed (a 401 to the token
    // it held then) is served by that refresh, however late its request arrives.
    const current = await findConnectionById(stack.db.sql, id);
    const seen = (current?.refreshCount ?? 0) - 1;
    const late = await refreshThroughWorkflow(stack.temporal, stack.config.temporal.taskQueue, {
      connectionId: id,
      seenRefreshCount: seen,
      force: true,
    });
    expect(late).toMatchObject({ status: 'active', refreshed: false });
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(2);
  });

  it('keeps the new tokens through a database outage at the moment of storing them', async () => {
    const id = await connect('u_outage', 'outage');
    await expireNow(id);
    // Updates of this connection fail until the outage row is gone: the app will already have
    // rotated the refresh token, so asking it again would spend a dead one.
    // Each refused update is counted on a sequence, which the refusal does not roll back.
    await stack.db.sql.unsafe(`
      create table if not exists test_outage (connection_id uuid primary key);
      create sequence if not exists test_outage_refusals;
      create or replace function test_outage_guard() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from test_outage where connection_id = new.id) then
          perform nextval('test_outage_refusals');
          raise exception 'simulated outage';
        end if;
        return new;
      end $$;
      drop trigger if exists test_outage_guard on connections;
      create trigger test_outage_guard before update on connections
        for each row execute function test_outage_guard();`);
    await stack.db.sql`insert into test_outage (connection_id) values (${id})`;
    stack.demo.resetStats();
    const pending = validAccessToken(deps, id);
    // The outage ends once storing the new tokens has met it.
    await eventually('storing the refreshed tokens refused', async () => {
      const [refusals] = await stack.db.sql<{ isCalled: boolean }[]>`
        select is_called from test_outage_refusals`;
      return refusals?.isCalled ? true : null;
    });
    await stack.db.sql`delete from test_outage where connection_id = ${id}`;
    const result = await pending;
    if (!result.ok) throw new Error(`no token: ${result.status}`);
    expect(await tasksStatus(result.accessToken)).toBe(200);
    expect(stack.demo.stats().tokenRequests.refresh_token).toBe(1);
    const connection = await findConnectionById(stack.db.sql, id);
    expect(connection?.status).toBe('active');
    expect(connection?.refreshCount).toBe(1);
  });

  it('marks the connection expired when the app revoked the grant, and a reconnect link revives it', async () => {
    const id = await connect('u_revoked', 'revoked-user');
    await stack.demo.revokeGrants('revoked-user');
    await expireNow(id);
    expect(await validAccessToken(deps, id)).toEqual({ ok: false, status: 'expired' });
    const connection = await findConnectionById(stack.db.sql, id);
    expect(connection?.status).toBe('expired');

    if (!connection) throw new Error('connection vanished');
    const link = await reconnectLinkFor(stack.db.sql, stack.config, connection);
    expect(new Date(link.expires_at).getTime() - Date.now()).toBeGreaterThan(
      6.9 * 24 * 3600 * 1000,
    );
    expect((await reconnectLinkFor(stack.db.sql, stack.config, connection)).url).toBe(link.url);
    expect((await walkConnectLink(link.url, { username: 'revoked-user' })).status).toBe(200);

    const revived = await findConnectionById(stack.db.sql, id);
    expect(revived?.status).toBe('active');
    const token = await validAccessToken(deps, id);
    expect(token.ok && (await tasksStatus(token.accessToken))).toBe(200);
    // Single use: the link is spent, and the next one is new.
    expect((await fetch(link.url)).status).toBe(410);
    expect((await reconnectLinkFor(stack.db.sql, stack.config, connection)).url).not.toBe(link.url);
  });
});
