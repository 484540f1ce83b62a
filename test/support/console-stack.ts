import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { setGroupRoles, type Role } from '../../activities/db/role-mappings.js';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { DEV_PASSWORD } from '../../infra/dev-idp/index.js';
import { startCallStack, type CallStack } from './call-stack.js';
import { CHROMIUM_ARGS, ensureChromium } from './chromium.js';
import {
  signInAs,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from './identity-provider.js';
import { startOrUndo } from './stops.js';

/** The role mappings every console test starts with, in environment `test`. */
export const TEST_ROLE_MAPPINGS: Record<string, Role[]> = {
  approvers: ['approver'],
  finance: ['approver'],
  operators: ['operator', 'admin'],
};

export interface ConsoleStack {
  stack: CallStack;
  idp: TestIdentityProvider;
  /** `<api>/console/test`. */
  base: string;
  /**
   * Signs `email` in over plain HTTP (the provider's form, then the console's callback) and
   * returns the browser's cookies, the session cookie among them.
   */
  signIn(email: string, jar?: CookieJar): Promise<CookieJar>;
  /** A fetch from that browser: its cookies, no redirects followed. */
  fetchAs(jar: CookieJar, path: string, init?: RequestInit): Promise<Response>;
  /** Chromium, launched once for the file. */
  browser(): Promise<Browser>;
  /** A new browser context (a private window) signed in as `email` through the real pages. */
  signedInContext(
    email: string,
    viewport?: { width: number; height: number },
  ): Promise<{
    context: BrowserContext;
    page: Page;
  }>;
  stop(): Promise<void>;
}

/**
 * A console test's world: the call stack (Postgres, Temporal, worker, API, demo app) with the dev
 * sign-in provider as its identity provider, the console's client registered there with the
 * API's own callback, and the test environment's groups mapped to roles.
 */
export async function startConsoleStack(
  options: { env?: Record<string, string>; mappings?: Record<string, Role[]> } = {},
): Promise<ConsoleStack> {
  return startOrUndo(async (stops) => {
    let idp: TestIdentityProvider | undefined;
    const stack = stops.add(
      await startCallStack({
        ...(options.env ? { env: options.env } : {}),
        envFor: async (publicUrl) => {
          idp = await startTestIdentityProvider(stops, {
            redirectUris: [`${publicUrl}/console/callback`],
          });
          return {
            OIDC_ISSUER_URL: idp.issuer,
            OIDC_CLIENT_ID: idp.client.client_id,
            OIDC_CLIENT_SECRET: idp.client.client_secret,
            OIDC_SCOPES: 'openid email profile groups',
            // The test's own settings win (an issuer nobody answers at, say).
            ...options.env,
          };
        },
      }),
    );
    if (!idp) throw new Error('the identity provider did not start');
    const provider = idp;
    for (const [group, roles] of Object.entries(options.mappings ?? TEST_ROLE_MAPPINGS)) {
      await setGroupRoles(stack.db.sql, stack.environmentId, group, roles);
    }
    const api = stack.api.url;
    const base = `${api}/console/test`;
    let launched: Browser | undefined;

    const fetchAs = (jar: CookieJar, path: string, init: RequestInit = {}) =>
      fetch(path.startsWith('http') ? path : `${api}${path}`, {
        redirect: 'manual',
        ...init,
        headers: { cookie: jar.header(), ...(init.headers as Record<string, string> | undefined) },
      }).then((res) => {
        jar.store(res);
        return res;
      });

    const consoleStack: ConsoleStack = {
      stack,
      idp: provider,
      base,
      async signIn(email, jar = new CookieJar()) {
        const callback = await signInAs(new URL(`${base}/sign-in`), email, {
          jar,
          isDestination: (url) => url.pathname === '/console/callback',
        });
        const landed = await fetchAs(jar, callback.href);
        if (landed.status !== 303) {
          throw new Error(
            `signing ${email} in to the console answered ${String(landed.status)}: ${await landed.text()}`,
          );
        }
        return jar;
      },
      fetchAs,
      async browser() {
        if (!launched) {
          launched = await chromium.launch({
            executablePath: await ensureChromium(),
            args: CHROMIUM_ARGS,
          });
          stops.push(async () => {
            await launched?.close();
          });
        }
        return launched;
      },
      async signedInContext(email, viewport = { width: 1280, height: 900 }) {
        const context = await (await consoleStack.browser()).newContext({ viewport });
        const page = await context.newPage();
        await page.goto(`${base}/inbox`);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(DEV_PASSWORD);
        await page.getByRole('button', { name: /sign in/i }).click();
        await page.waitForURL((url) => url.pathname.startsWith('/console/test/'));
        return { context, page };
      },
      stop: () => stops.stopAll(),
    };
    return consoleStack;
  });
}
