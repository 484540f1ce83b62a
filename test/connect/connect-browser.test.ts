import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';

let stack: ConnectStack;
let browser: Browser;

beforeAll(async () => {
  const executablePath = await ensureChromium();
  stack = await startConnectStack();
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 600_000);

afterAll(async () => {
  await browser.close();
  await stack.stop();
});

describe('the hosted connect flow in a real browser', () => {
  it('takes a person from the link through consent at the app to the success page', async () => {
    const response = await createLink(stack, {
      user: 'u_browser',
      customer: 'browser-co',
      app: 'acme',
    });
    const link = (await response.json()) as { url: string };
    const page = await browser.newPage();
    try {
      await page.goto(link.url);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
        'Acme Tasks',
      );
      await page.getByRole('link', { name: /Continue to Acme Tasks/ }).click();

      // The demo app's own consent page.
      await page.getByLabel(/user/i).fill('carol');
      await page.getByRole('button', { name: /allow/i }).click();

      await page.waitForURL(/\/connect\/callback/);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
        'is connected',
      );
    } finally {
      await page.close();
    }
    const rows = await stack.db.sql<{ status: string; app: string }[]>`
      select c.status, c.app from connections c join connected_users u on u.id = c.connected_user_id
      where u.external_id = 'u_browser'`;
    expect(rows).toEqual([{ status: 'active', app: 'acme' }]);
  });
});
