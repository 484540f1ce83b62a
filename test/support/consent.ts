import { CookieJar } from './cookie-jar.js';

export interface WalkOptions {
  username?: string;
  decision?: 'allow' | 'deny';
  /** Runs when the browser is about to return to Gatehouse's callback with the app's answer. */
  beforeCallback?: (callbackUrl: URL) => Promise<void>;
}

export interface WalkResult {
  status: number;
  url: URL;
  html: string;
  /** Set when the flow ended in a redirect away from Gatehouse (the link's redirect_url). */
  redirectedTo: URL | null;
}

/**
 * What a person does with a connect link, over plain HTTP: open it, press Continue, consent at
 * the demo app (a form with `username` and `decision`), and come back to Gatehouse's callback.
 */
export async function walkConnectLink(
  linkUrl: string,
  options: WalkOptions = {},
): Promise<WalkResult> {
  const jar = new CookieJar();
  const gatehouse = new URL(linkUrl).origin;
  const landing = await fetch(linkUrl);
  const landingHtml = await landing.text();
  if (landing.status !== 200)
    return { status: landing.status, url: new URL(linkUrl), html: landingHtml, redirectedTo: null };
  const start = /<a[^>]+href="([^"]+\/start)"/.exec(landingHtml)?.[1];
  if (!start) throw new Error(`no Continue link on the connect page:\n${landingHtml}`);

  let url = new URL(start.replace(/&amp;/g, '&'), linkUrl);
  let form: string | undefined;
  for (let hop = 0; hop < 15; hop += 1) {
    if (url.origin === gatehouse && url.pathname === '/connect/callback')
      await options.beforeCallback?.(url);
    const res = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: form }),
    });
    jar.store(res);
    const html = await res.text();
    const location = res.headers.get('location');
    form = undefined;
    if (location !== null) {
      const next = new URL(location, url);
      if (url.origin === gatehouse && url.pathname === '/connect/callback') {
        return { status: res.status, url, html, redirectedTo: next };
      }
      url = next;
      continue;
    }
    if (url.origin === gatehouse) return { status: res.status, url, html, redirectedTo: null };
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined)
      throw new Error(`no consent form at ${url.href} (${res.status}):\n${html}`);
    url = new URL(action, url);
    form = new URLSearchParams({
      username: options.username ?? 'alice',
      decision: options.decision ?? 'allow',
    }).toString();
  }
  throw new Error('the connect flow did not come back to Gatehouse');
}
