import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { saveCredentialApp } from '../../activities/db/credential-apps.js';
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
  const base = { environmentId: stack.environmentId, hint: null, declaredBy: 'test' };
  await saveCredentialApp(stack.db.sql, {
    ...base,
    id: 'keyed',
    name: 'Keyed Service',
    scheme: { scheme: 'api_key', in: 'header', name: 'X-Api-Key' },
  });
  await saveCredentialApp(stack.db.sql, {
    ...base,
    id: 'basics',
    name: 'Basic Service',
    scheme: { scheme: 'basic' },
  });
}, 600_000);

async function newLink(user: string, app: string): Promise<string> {
  const response = await createLink(stack, { user, app });
  expect(response.status).toBe(201);
  return ((await response.json()) as { url: string }).url;
}

async function exported(user: string): Promise<unknown> {
  const [row] = await stack.db.sql<{ id: string }[]>`
    select c.id from connections c join connected_users u on u.id = c.connected_user_id
    where u.external_id = ${user} and c.status = 'active'`;
  if (!row) return null;
  const response = await fetch(`${stack.api.url}/v1/connections/${row.id}/export`, {
    headers: { authorization: `Bearer ${stack.key.key}` },
  });
  return ((await response.json()) as { credential: unknown }).credential;
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

describe('the credential page in a real browser', () => {
  it('takes a key typed by a person, the form posted as a browser posts it, to the success page', async () => {
    const page = await browser.newPage();
    const key = `key_${randomBytes(16).toString('hex')}`;
    try {
      await page.goto(await newLink('u_typed', 'keyed'));
      await expect(heading(page)).resolves.toContain('Keyed Service');
      // A key with a space in it: refused with the page again, what is wrong said at the field.
      await page.getByLabel('Keyed Service API key').fill('two words');
      const refused = page.waitForResponse((r) => r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Connect Keyed Service' }).click();
      expect((await refused).status()).toBe(400);
      await expect(page.getByRole('alert').textContent()).resolves.toContain('no spaces');
      await expect(page.getByLabel('Keyed Service API key').inputValue()).resolves.toBe('');

      // The same form, as the browser sends it (Origin, Sec-Fetch-Site, the attempt cookie).
      await page.getByLabel('Keyed Service API key').fill(key);
      const posted = page.waitForResponse((r) => r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Connect Keyed Service' }).click();
      expect((await posted).status()).toBe(200);
      await expect(heading(page)).resolves.toContain('is connected');
    } finally {
      await page.close();
    }
    expect(await exported('u_typed')).toEqual({
      scheme: 'api_key',
      in: 'header',
      name: 'X-Api-Key',
      key,
    });
  });

  it('asks for a username and password for basic, and a post from another browser is refused', async () => {
    const link = await newLink('u_basic_browser', 'basics');
    const owner = await browser.newContext();
    const other = await browser.newContext();
    try {
      const page = await owner.newPage();
      await page.goto(link);
      await page.getByLabel('Basic Service username').fill('ada');
      await page.getByLabel('Basic Service password').fill('s3cret pass');

      // Another browser sends the same form (same fields, its own cookies: none of this attempt).
      const intruder = await other.newPage();
      await intruder.goto(link);
      const hidden = (name: string) => page.locator(`input[name=${name}]`).inputValue();
      const fields = {
        attempt: await hidden('attempt'),
        issued: await hidden('issued'),
        csrf: await hidden('csrf'),
      };
      const forged = await intruder.request.post(`${link}/credential`, {
        form: { ...fields, username: 'mallory', password: 'x' },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(403);

      const posted = page.waitForResponse((r) => r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Connect Basic Service' }).click();
      expect((await posted).status()).toBe(200);
    } finally {
      await owner.close();
      await other.close();
    }
    expect(await exported('u_basic_browser')).toEqual({
      scheme: 'basic',
      username: 'ada',
      password: 's3cret pass',
    });
  });
});
