import { beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { startTestApi, type TestApi } from '../support/api.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let key: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  key = await createTestKey(db.sql, { env: 'test', access: 'full', audience: 'business' });
});

describe('headers on every API answer', () => {
  it.each([
    ['a JSON answer', 'GET', '/v1/funded-access', true],
    ['a JSON write', 'PUT', '/v1/funded-access', true],
    ['a 401', 'GET', '/v1/funded-access', false],
    ['a 404 envelope', 'GET', '/v1/no-such-route', true],
    ['a 400 envelope', 'GET', '/v1/audit?limit=nope', true],
    ['the health check', 'GET', '/healthz', false],
    ['an OpenAPI document', 'GET', '/openapi/management.json', false],
    ['an unknown path outside /v1', 'GET', '/nowhere', false],
  ] as const)('%s is never cached and never sniffed', async (_what, method, path, withKey) => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        ...(withKey ? bearer(key.key) : {}),
        ...(method === 'PUT' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'PUT' ? { body: '{"enabled":true}' } : {}),
    });
    await response.arrayBuffer();
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('/docs', () => {
  it('is served under a strict Content-Security-Policy', async () => {
    const response = await fetch(`${api.url}/docs/`);
    expect(response.status).toBe(200);
    await response.text();
    const csp = response.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp.split(';').map((part) => {
        const [name = '', ...values] = part.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    // The scripts it loads come under the same policy.
    const script = await fetch(`${api.url}/docs/swagger-ui-init.js`);
    await script.text();
    expect(script.headers.get('content-security-policy')).toBe(csp);
  });

  describe('in Chromium', () => {
    let browser: Browser;

    const started = stopsAfterAll();
    beforeAll(async () => {
      browser = started.add(
        await chromium.launch({
          executablePath: await ensureChromium(),
          args: CHROMIUM_ARGS,
        }),
      );
    }, 600_000);

    it('renders every document with no policy violation, opening on all operations', async () => {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') violations.push(message.text());
      });
      await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
      // A string, not a function: the test is compiled without the DOM's types.
      await page.addInitScript(
        "document.addEventListener('securitypolicyviolation', (event) => " +
          "window.reportViolation(event.violatedDirective + ' ' + event.blockedURI));",
      );
      await page.goto(`${api.url}/docs/`);
      const title = page.locator('.swagger-ui .info .title');
      await expect(title.textContent()).resolves.toBeDefined();
      // It opens on both interfaces by resource, the connected-user resources first.
      await title.filter({ hasText: 'Gatehouse API' }).waitFor();
      await page.locator('.swagger-ui .opblock').first().waitFor();
      expect(await page.locator('.swagger-ui .opblock-tag').first().textContent()).toContain(
        'Connect links',
      );
      expect(await page.locator('.swagger-ui .opblock').count()).toBeGreaterThan(40);

      for (const [name, atLeast] of [
        ['connected-user API', 30],
        ['management API', 10],
      ] as const) {
        await page.locator('.topbar select').selectOption({ label: name });
        await title.filter({ hasText: name }).waitFor();
        await page.locator('.swagger-ui .opblock').first().waitFor();
        expect(await page.locator('.swagger-ui .opblock').count()).toBeGreaterThan(atLeast);
      }
      if (process.env.DOCS_SCREENSHOT) {
        await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
      }
      expect(violations).toEqual([]);
      await page.close();
    }, 60_000);
  });
});
