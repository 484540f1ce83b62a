// A person connecting a remote MCP app in a real browser, end to end: the hosted
// link, Continue, the SDK example server's authorization server (which consents at once), and
// back to Gatehouse's success page, the browser's attempt cookie surviving the round trip.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import {
  api,
  registerMcpApp,
  startMcpAuthStack,
  type McpAuthStack,
} from '../support/mcp-auth-stack.js';
import { startMcpExampleServer, type McpExampleServer } from '../support/mcp-example-server.js';

let stack: McpAuthStack;
let server: McpExampleServer;
let browser: Browser;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const executablePath = await ensureChromium();
  [stack, server, browser] = await Promise.all([
    startMcpAuthStack().then((started) => (stops.push(() => started.stop()), started)),
    startMcpExampleServer().then((started) => (stops.push(() => started.stop()), started)),
    chromium
      .launch({ executablePath, args: CHROMIUM_ARGS })
      .then((started) => (stops.push(() => started.close()), started)),
  ]);
  await registerMcpApp(stack, { id: 'demo-mcp', name: 'Demo MCP', serverUrl: server.serverUrl });
  await api(stack, 'PUT', '/v1/mcp-client-branding', { client_name: 'Northwind Assistant' });
}, 600_000);

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

describe('connecting a remote MCP app in a real browser', () => {
  it('takes a person from the link through the authorization server to the success page', async () => {
    const response = await api(stack, 'POST', '/v1/connect/links', {
      user: 'u_browser',
      app: 'demo-mcp',
    });
    const link = (await response.json()) as { url: string };
    const page = await browser.newPage();
    try {
      await page.goto(link.url);
      const heading = () => page.getByRole('heading', { level: 1 }).textContent();
      await expect(heading()).resolves.toContain('Demo MCP');
      await page.getByRole('link', { name: /Continue to Demo MCP/ }).click();
      await page.waitForURL(/\/connect\/callback/);
      await expect(heading()).resolves.toContain('is connected');
    } finally {
      await page.close();
    }
    const [connection] = await stack.db.sql<{ status: string; clientKind: string }[]>`
      select c.status, m.client_kind from connections c
      join connected_users u on u.id = c.connected_user_id
      join mcp_connection_auth m on m.connection_id = c.id
      where u.external_id = 'u_browser'`;
    expect(connection).toEqual({ status: 'active', clientKind: 'dcr' });
  });
});
