// The console's Connections section on the real stack: the environment's users and their
// connections, a user's page, and what operators do there: revoke a connection (through the revoke
// workflow, as `DELETE /v1/connections/{id}` does) and make a link for the user to connect again
// (checked as `POST /v1/connect/links` checks one), each an audit event of the person. People sign
// in through the real identity provider; pages are read in headless Chromium at a phone's and a
// desktop's width (screenshots in `screenshots/`).
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { stopsAfterAll } from '../support/stops.js';

/** Where the screenshots go (README, "Test it"). */
const SCREENSHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

let world: ConsoleStack;
/** Revoked by Olivia in the course of the tests, then connected again. */
let first: SeededConnection;
/** Never changed: what refused attempts must leave as it was. */
let second: SeededConnection;
const started = stopsAfterAll();

beforeAll(async () => {
  world = started.add(await startConsoleStack());
  first = await world.stack.connect('u_conn_first');
  second = await world.stack.connect('u_conn_second');
  await mkdir(SCREENSHOTS, { recursive: true });
}, 600_000);

/** No sideways scrolling: the page fits the window it is shown in. */
async function fitsWidth(page: Page): Promise<boolean> {
  // A string, evaluated in the page: this program is compiled without the DOM's types.
  return (
    (await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')) === true
  );
}

async function photographed(page: Page, name: string): Promise<void> {
  expect(await fitsWidth(page)).toBe(true);
  const { width } = page.viewportSize() ?? { width: 0 };
  await page.screenshot({ path: `${SCREENSHOTS}${name}-${String(width)}.png`, fullPage: true });
}

async function statusOf(connection: SeededConnection): Promise<unknown> {
  const answer = await world.stack.request(
    world.stack.key,
    'GET',
    `/v1/connections/${connection.connection.id}`,
  );
  return answer.body.status;
}

async function consoleChanges(): Promise<
  { action: string; agentId: string; via: string; request: Record<string, unknown> }[]
> {
  return world.stack.db.sql`
    select action, agent_id, via, request from audit_events
    where environment_id = ${world.stack.environmentId} and action like 'console.connections.%'
    order by seq`;
}

const userPath = (seeded: SeededConnection) =>
  `/console/test/connections/${seeded.user.externalId}`;
const connectionPath = (seeded: SeededConnection) => `${userPath(seeded)}/${seeded.connection.id}`;

/** The form token of the session `jar` holds, as its pages carry it. */
async function formTokenOf(jar: CookieJar): Promise<string> {
  const page = await world.fetchAs(jar, userPath(second));
  const token = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!token) throw new Error('no form token on the page');
  return token;
}

function post(jar: CookieJar, path: string, form: Record<string, string>, origin?: string) {
  return world.fetchAs(jar, path, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: origin ?? new URL(world.base).origin,
    },
    body: new URLSearchParams(form).toString(),
  });
}

describe('the Connections section', () => {
  it('lists the users and their connections, filtered by user, to every role', async () => {
    const alice = await world.signedInContext('alice@example.com', { width: 1280, height: 900 });
    const { page } = alice;
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.goto(`${world.base}/connections`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'Connections',
      );
      await expect(
        page.getByRole('link', { name: 'Connections', exact: true }).getAttribute('aria-current'),
      ).resolves.toBe('page');
      const table = page.getByRole('table', { name: 'Users and their connections' });
      // Newest user first, each with its app, status and times.
      const rows = table.locator('tbody tr');
      await expect(rows.count()).resolves.toBe(2);
      await expect(rows.nth(0).textContent()).resolves.toContain('u_conn_second');
      await expect(rows.nth(1).textContent()).resolves.toContain('u_conn_first');
      await expect(rows.nth(1).locator('td[data-label="App"]').textContent()).resolves.toBe('acme');
      await expect(rows.nth(1).locator('td[data-label="Status"]').textContent()).resolves.toBe(
        'active',
      );
      await photographed(page, 'console-connections');
    }
    await page.getByLabel('User', { exact: true }).fill('u_conn_first');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/user=u_conn_first/);
    await expect(page.locator('table.list tbody tr').count()).resolves.toBe(1);
    await page.goto(`${world.base}/connections?user=nobody-here`);
    await expect(page.locator('main').textContent()).resolves.toContain(
      'No user “nobody-here” in this environment.',
    );
    const bad = await page.goto(`${world.base}/connections?user=%01`);
    expect(bad?.status()).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not a user id');

    // A user's page, to an approver: the connections, and nothing to change them with.
    await page.getByRole('link', { name: 'Connections', exact: true }).click();
    await page.getByRole('link', { name: 'u_conn_first' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'User u_conn_first',
    );
    const connections = page.getByRole('table', { name: 'Connections' });
    await expect(connections.locator('tbody tr').count()).resolves.toBe(1);
    await expect(page.getByRole('columnheader', { name: 'Actions' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: /Revoke/ }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /reconnect link/i }).count()).resolves.toBe(0);
    const missing = await page.goto(`${world.base}/connections/nobody-here`);
    expect(missing?.status()).toBe(404);
    await alice.context.close();
  });

  it('refuses revoking and links to an approver, who lacks the govern role: 403, nothing changed', async () => {
    const alice = await world.signIn('alice@example.com');
    const csrf = await formTokenOf(alice);
    const revoke = await post(alice, `${connectionPath(second)}/revoke`, { csrf });
    expect(revoke.status).toBe(403);
    await expect(revoke.text()).resolves.toContain('Not one of your tasks');
    expect((await world.fetchAs(alice, `${connectionPath(second)}/revoke`)).status).toBe(403);
    const link = await post(alice, `${connectionPath(second)}/reconnect-link`, { csrf });
    expect(link.status).toBe(403);
    expect(await statusOf(second)).toBe('active');
    expect(await consoleChanges()).toEqual([]);
  });

  it('refuses an operator’s POST without the session’s form token, or from another origin: 403, nothing changed', async () => {
    const olivia = await world.signIn('olivia@example.com');
    const alice = await world.signIn('alice@example.com');
    const own = await formTokenOf(olivia);
    const attempts = [
      post(olivia, `${connectionPath(second)}/revoke`, {}),
      post(olivia, `${connectionPath(second)}/revoke`, { csrf: 'x'.repeat(43) }),
      // Another session's token is worth nothing in this one.
      post(olivia, `${connectionPath(second)}/revoke`, { csrf: await formTokenOf(alice) }),
      post(olivia, `${connectionPath(second)}/revoke`, { csrf: own }, 'https://evil.example'),
      post(olivia, `${connectionPath(second)}/reconnect-link`, {}),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status).toBe(403);
      await expect(answer.text()).resolves.toContain('Nothing was changed');
    }
    expect(await statusOf(second)).toBe('active');
    expect(await consoleChanges()).toEqual([]);
    // A connection of another user, named under this one, is no connection here.
    const crossed = await post(olivia, `${userPath(second)}/${first.connection.id}/revoke`, {
      csrf: own,
    });
    expect(crossed.status).toBe(404);
    expect(await statusOf(first)).toBe('active');
  });

  it('lets an operator revoke a connection, through the revoke workflow, recorded as theirs', async () => {
    const olivia = await world.signedInContext('olivia@example.com', { width: 390, height: 844 });
    const { page } = olivia;
    await page.goto(`${world.base}/connections/u_conn_first`);
    await photographed(page, 'console-connection-user');
    await page.getByRole('link', { name: 'Revoke the connection to acme' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Revoke u_conn_first’s connection to acme?',
    );
    await photographed(page, 'console-connection-revoke');
    // The confirmation alone changes nothing.
    expect(await statusOf(first)).toBe('active');
    await page.getByRole('button', { name: 'Revoke the connection' }).click();
    await page.waitForURL(/\?revoked=/);
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'The connection to acme is revoked.',
    );
    await expect(
      page.locator('table.list tbody tr').first().locator('td[data-label="Status"]').textContent(),
    ).resolves.toBe('revoked');
    expect(await statusOf(first)).toBe('revoked');
    // Revoked for real: a call for the user finds no connection to use.
    const call = await world.stack.run('acme.list_tasks', { user: 'u_conn_first' });
    expect(call.status).not.toBe(200);

    const changes = await consoleChanges();
    expect(changes).toEqual([
      {
        action: 'console.connections.revoke',
        agentId: 'person:olivia@example.com',
        via: 'console',
        request: {
          person: {
            issuer: world.idp.issuer,
            subject: 'dev-olivia',
            name: 'Olivia Operator',
            email: 'olivia@example.com',
          },
          user: 'u_conn_first',
          connection_id: first.connection.id,
          app: 'acme',
        },
      },
    ]);
    // Revoking it again changes nothing and records nothing.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const again = await page.request.post(
      `${world.base}/connections/u_conn_first/${first.connection.id}/revoke`,
      {
        form: { csrf },
        headers: { origin: new URL(world.base).origin },
        maxRedirects: 0,
      },
    );
    expect(again.status()).toBe(303);
    expect(again.headers().location).toContain('?unchanged=');
    expect(await consoleChanges()).toHaveLength(1);
    // The change is in the Calls section's list, as the person's.
    await page.goto(`${world.base}/calls?action=console.connections.revoke`);
    await expect(page.locator('table.list tbody tr').count()).resolves.toBe(1);
    await expect(page.locator('table.list tbody').textContent()).resolves.toContain(
      'person:olivia@example.com',
    );
    await olivia.context.close();
  });

  it('gives an operator a link to send the user, which connects the app again', async () => {
    const olivia = await world.signedInContext('olivia@example.com', { width: 1280, height: 900 });
    const { page } = olivia;
    await page.goto(`${world.base}/connections/u_conn_first`);
    await photographed(page, 'console-connection-user');
    await page.getByRole('button', { name: 'Make a reconnect link for acme' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'A link for u_conn_first to connect acme',
    );
    const url = (await page.locator('main p.line code').textContent()) ?? '';
    expect(url.startsWith(`${world.stack.api.url}/connect/`)).toBe(true);
    await photographed(page, 'console-connection-link');

    const [change] = (await consoleChanges()).filter(
      (row) => row.action === 'console.connections.reconnect_link',
    );
    expect(change).toMatchObject({
      agentId: 'person:olivia@example.com',
      request: { user: 'u_conn_first', app: 'acme', connection_id: first.connection.id },
    });
    expect(typeof change?.request.link_id).toBe('string');
    // The link's id is recorded, never the link: whoever reads the log cannot use it.
    const token = url.slice(url.lastIndexOf('/') + 1);
    expect(JSON.stringify(change)).not.toContain(token);

    // The user, in a browser of their own, connects acme again through it.
    const user = await (await world.browser()).newPage();
    await user.goto(url);
    await user.getByRole('link', { name: /Continue to Acme Tasks/ }).click();
    await user.getByLabel(/user/i).fill('u_conn_first');
    await user.getByRole('button', { name: /allow/i }).click();
    await user.waitForURL(/\/connect\/callback/);
    await user.close();
    await page.goto(`${world.base}/connections/u_conn_first`);
    const statuses = await page
      .locator('table.list tbody td[data-label="Status"]')
      .allTextContents();
    expect(statuses.map((status) => status.trim())).toEqual(['revoked', 'active']);
    await olivia.context.close();
  });
});
