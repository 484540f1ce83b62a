import { beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;
let browser: Browser;

const started = stopsAfterAll();

beforeAll(async () => {
  const executablePath = await ensureChromium();
  stack = started.add(await startConnectStack());
  browser = started.add(await chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
}, 600_000);

async function newLink(user: string): Promise<{ id: string; url: string }> {
  const response = await createLink(stack, { user, customer: 'browser-co', app: 'acme' });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; url: string };
}

async function connectionsOf(user: string) {
  return stack.db.sql<{ status: string; app: string }[]>`
    select c.status, c.app from connections c join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user}`;
}

async function attemptsOf(linkId: string) {
  return stack.db.sql<{ spent: boolean; parked: boolean }[]>`
    select consumed_at is not null as spent, callback_params_sealed is not null as parked
    from oauth_attempts where link_id = ${linkId} order by created_at`;
}

/** At the demo app's consent page: sign in as `username` and allow. */
async function consent(page: Page, username: string): Promise<void> {
  await page.getByLabel(/user/i).fill(username);
  await page.getByRole('button', { name: /allow/i }).click();
  await page.waitForURL(/\/connect\/callback/);
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

/** Opens a link and presses Continue; resolves to the app's authorize URL Gatehouse sent it to. */
async function startIn(page: Page, linkUrl: string): Promise<string> {
  await page.goto(linkUrl);
  const start = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/start'));
  await page.getByRole('link', { name: /Continue to Acme Tasks/ }).click();
  const location = (await start).headers()['location'];
  if (!location) throw new Error('/start did not redirect');
  await page.getByLabel(/user/i).waitFor();
  return location;
}

/** What the app tells Gatehouse about the account behind the user's connection. */
async function accountThroughProxy(user: string): Promise<unknown> {
  const response = await fetch(`${stack.api.url}/v1/proxy/acme/me`, {
    headers: { authorization: `Bearer ${stack.key.key}`, 'service-user': user },
  });
  return { status: response.status, body: await response.json() };
}

describe('the hosted connect flow in a real browser', () => {
  it('takes a person from the link through consent at the app to the success page', async () => {
    const link = await newLink('u_browser');
    const page = await browser.newPage();
    try {
      await page.goto(link.url);
      await expect(heading(page)).resolves.toContain('Acme Tasks');
      await page.getByRole('link', { name: /Continue to Acme Tasks/ }).click();

      // The demo app's own consent page.
      await consent(page, 'carol');
      await expect(heading(page)).resolves.toContain('is connected');
    } finally {
      await page.close();
    }
    expect(await connectionsOf('u_browser')).toEqual([{ status: 'active', app: 'acme' }]);
  });

  it('refuses a victim’s browser sent to an attacker’s authorize URL, attaching nothing', async () => {
    const link = await newLink('u_mallory_script');
    // Mallory starts her own flow from a script and keeps only the app's authorize URL.
    const start = await fetch(`${link.url}/start`, { redirect: 'manual' });
    const authorizeUrl = start.headers.get('location');
    if (!authorizeUrl) throw new Error('/start did not redirect');

    // The victim, signed in to nothing, follows it and consents at the app as themselves.
    const victim = await browser.newContext();
    try {
      const page = await victim.newPage();
      await page.goto(authorizeUrl);
      await consent(page, 'victim-one');
      await expect(heading(page)).resolves.toContain('cannot be finished here');
      await expect(page.locator('body').textContent()).resolves.toContain(
        'start again from the link you were given',
      );
    } finally {
      await victim.close();
    }
    expect(await connectionsOf('u_mallory_script')).toEqual([]);
    expect(await attemptsOf(link.id)).toEqual([{ spent: false, parked: false }]);
  });

  it('lets the browser that started an attempt finish it after a victim’s was refused', async () => {
    const link = await newLink('u_mallory');
    const mallory = await browser.newContext();
    const victim = await browser.newContext();
    try {
      const own = await mallory.newPage();
      const authorizeUrl = await startIn(own, link.url);

      const lured = await victim.newPage();
      await lured.goto(authorizeUrl);
      await consent(lured, 'victim');
      await expect(heading(lured)).resolves.toContain('cannot be finished here');
      expect(await connectionsOf('u_mallory')).toEqual([]);
      expect(await attemptsOf(link.id)).toEqual([{ spent: false, parked: false }]);

      // Mallory's own browser holds the attempt's cookie: it completes, with her own account.
      await consent(own, 'mallory');
      await expect(heading(own)).resolves.toContain('is connected');
    } finally {
      await victim.close();
      await mallory.close();
    }
    expect(await connectionsOf('u_mallory')).toEqual([{ status: 'active', app: 'acme' }]);
    expect(await accountThroughProxy('u_mallory')).toEqual({
      status: 200,
      body: { id: 'mallory' },
    });
  });

  it('completes two attempts started in two tabs of one browser', async () => {
    const first = await newLink('u_tab_a');
    const second = await newLink('u_tab_b');
    const context = await browser.newContext();
    try {
      const a = await context.newPage();
      const b = await context.newPage();
      await startIn(a, first.url);
      await startIn(b, second.url);
      await consent(b, 'two-tabs');
      await expect(heading(b)).resolves.toContain('is connected');
      await consent(a, 'two-tabs');
      await expect(heading(a)).resolves.toContain('is connected');
    } finally {
      await context.close();
    }
    expect(await connectionsOf('u_tab_a')).toEqual([{ status: 'active', app: 'acme' }]);
    expect(await connectionsOf('u_tab_b')).toEqual([{ status: 'active', app: 'acme' }]);
  });
});
