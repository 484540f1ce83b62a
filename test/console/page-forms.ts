import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import type { ConsoleStack } from '../support/console-stack.js';

/** Where the screenshots go (README, "Test it"). */
export const SCREENSHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

/** The widths the console's pages are photographed at: a phone's and a laptop's. */
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

export async function screenshotsFolder(): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
}

/** Writes `console-<name>-<width>.png` of the whole page, as it is laid out now. */
export async function photograph(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({
    path: `${SCREENSHOTS}console-${name}-${String(width)}.png`,
    fullPage: true,
  });
}

/** How far the document is wider than its window, in CSS pixels (0: no sideways scrolling). */
export async function overflowOf(page: Page): Promise<number> {
  // A string, evaluated in the page: this program is compiled without the DOM's types.
  return page.evaluate<number>(
    'Math.max(0, document.documentElement.scrollWidth - window.innerWidth)',
  );
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/** An attribute value as the page escaped it, read back. */
function unescape(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity);
}

/**
 * The hidden fields of the form posting to `action` (a path below the console), as a browser
 * would send them; throws when the page has no such form.
 */
export function hiddenFieldsOf(page: string, action: string): Record<string, string> {
  const form = [...page.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].find(
    ([, target]) => unescape(target ?? '').endsWith(action),
  );
  if (!form) throw new Error(`the page has no form posting to ${action}`);
  const fields: Record<string, string> = {};
  for (const [input] of (form[2] ?? '').matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input)?.[1];
    const value = /value="([^"]*)"/.exec(input)?.[1] ?? '';
    if (name !== undefined) fields[name] = unescape(value);
  }
  return fields;
}

/** The form token of the session whose page this is (every console page's sign-out form has it). */
export function formTokenOf(page: string): string {
  const token = /name="csrf" value="([^"]*)"/.exec(page)?.[1];
  if (token === undefined) throw new Error('the page carries no form token');
  return unescape(token);
}

/** A GET of a console page in the browser `jar` stands for: its status and HTML. */
export async function pageAs(
  world: ConsoleStack,
  jar: CookieJar,
  path: string,
): Promise<{ status: number; html: string }> {
  const res = await world.fetchAs(jar, `${world.base}${path}`);
  return { status: res.status, html: await res.text() };
}

/** A form POST from that browser, from the console's own origin as a browser sends it. */
export async function postAs(
  world: ConsoleStack,
  jar: CookieJar,
  path: string,
  fields: Record<string, string>,
): Promise<{ status: number; html: string; location: string | null }> {
  const res = await world.fetchAs(jar, `${world.base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(world.base).origin,
    },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, html: await res.text(), location: res.headers.get('location') };
}
