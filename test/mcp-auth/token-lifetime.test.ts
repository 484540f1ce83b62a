// A remote MCP server's authorization server answering an `expires_in` no token has (1e308, a
// 30-digit integer, a negative number, a string, zero), through the real connect callback and a
// real refresh, read as catalog apps' answers are (activities/oauth/token-lifetime.ts): never a
// 500; an absurdly long lifetime is clamped, zero is no known expiry (an MCP server has no
// default), a negative or non-numeric one makes the answer malformed: the branded page.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_ACCESS_TOKEN_LIFETIME_SECONDS } from '../../activities/oauth/token-lifetime.js';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { walkMcpLink } from '../support/mcp-connect-walk.js';
import {
  startScriptedMcpAuthServer,
  type ScriptedMcpAuthServer,
} from '../support/scripted-mcp-auth-server.js';

let stack: McpAuthStack;
let server: ScriptedMcpAuthServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startScriptedMcpAuthServer().then((started) => (stops.push(() => started.close()), started)),
  ]);
  await registerMcpApp(stack, { id: 'lifetimes', name: 'Lifetimes', serverUrl: server.serverUrl });
  const branded = await api(stack, 'PUT', '/v1/mcp-client-branding', { client_name: 'Northwind' });
  expect(branded.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

const SECOND = 1000;
const CLAMPED = MAX_ACCESS_TOKEN_LIFETIME_SECONDS * SECOND;

async function connectionOf(user: string) {
  const [row] = await stack.db.sql<{ id: string; expiresAt: Date | null }[]>`
    select c.id, c.access_token_expires_at as expires_at from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} and c.status = 'active'`;
  return row ?? null;
}

/** Connects `user` while token answers say `expiresIn`; Gatehouse's answer at its callback. */
async function connectWith(user: string, expiresIn: string) {
  server.expiresIn = expiresIn;
  const response = await api(stack, 'POST', '/v1/connect/links', { user, app: 'lifetimes' });
  expect(response.status).toBe(201);
  const walk = await walkMcpLink(((await response.json()) as { url: string }).url);
  if (walk.stoppedAt !== 'callback') throw new Error(`stopped at ${walk.stoppedAt}`);
  return walk.page;
}

/** Whether `expiresAt` is `lifetimeMs` after some moment of [before, after]. */
function expectLifetime(expiresAt: Date | null | undefined, lifetimeMs: number, span: number[]) {
  const [before = NaN, after = NaN] = span;
  expect(expiresAt?.getTime()).toBeGreaterThanOrEqual(before + lifetimeMs - SECOND);
  expect(expiresAt?.getTime()).toBeLessThanOrEqual(after + lifetimeMs);
}

describe('a token answer at the connect callback whose expires_in is', () => {
  it.each([
    ['1e308', '1e308'],
    ['a 30-digit integer', '123456789012345678901234567890'],
  ])('%s connects, the expiry clamped', async (_case, expiresIn) => {
    const user = `u_${expiresIn.slice(0, 8)}`;
    const before = Date.now();
    const page = await connectWith(user, expiresIn);
    const after = Date.now();
    expect({ status: page.status, html: page.html }).toMatchObject({ status: 200 });
    expectLifetime((await connectionOf(user))?.expiresAt, CLAMPED, [before, after]);
  });

  it('0 connects, with no known expiry', async () => {
    const page = await connectWith('u_zero', '0');
    expect(page.status).toBe(200);
    expect(await connectionOf('u_zero')).toMatchObject({ expiresAt: null });
  });

  it.each([
    ['-5', '-5'],
    ['a string that is no number', '"abc"'],
  ])('%s is refused as malformed on the branded page; nothing is stored', async (_case, value) => {
    const user = `u_bad_${String(value.length)}`;
    const page = await connectWith(user, value);
    expect(page.status).toBe(502);
    expect(page.html).toContain('Lifetimes did not accept the sign-in');
    expect(await connectionOf(user)).toBeNull();
  });
});

describe('a token answer at a refresh whose expires_in is', () => {
  beforeAll(async () => {
    expect((await connectWith('u_refresh', '3600')).status).toBe(200);
  });

  async function refreshWith(expiresIn: string) {
    const connection = await connectionOf('u_refresh');
    if (!connection) throw new Error('no connection to refresh');
    server.expiresIn = expiresIn;
    const response = await api(stack, 'POST', `/v1/connections/${connection.id}/refresh`);
    expect({ status: response.status, body: await response.json() }).toMatchObject({
      status: 200,
      body: { status: 'active' },
    });
    return (await connectionOf('u_refresh'))?.expiresAt;
  }

  it.each([
    ['1e308', '1e308'],
    ['a 30-digit integer', '123456789012345678901234567890'],
  ])('%s refreshes, the expiry clamped', async (_case, expiresIn) => {
    const before = Date.now();
    const expiresAt = await refreshWith(expiresIn);
    expectLifetime(expiresAt, CLAMPED, [before, Date.now()]);
  });

  it('0 refreshes, with no known expiry', async () => {
    expect(await refreshWith('0')).toBeNull();
  });
});
