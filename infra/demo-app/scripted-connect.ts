import { CookieJar } from './cookie-jar.js';
import { consentAtDemoApp } from './scripted-consent.js';

export interface WalkOptions {
  username?: string;
  decision?: 'allow' | 'deny';
  /**
   * The browser's cookies. Gatehouse binds each OAuth attempt to the browser that started it
   * with a cookie set at `/start`, so the callback must carry the same jar. Default: a fresh jar.
   */
  jar?: CookieJar;
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

/** Where a walk stands when the app sends the browser back to Gatehouse. */
export interface AtCallback {
  /** The callback URL the app redirected to, not yet fetched. */
  callback: URL;
  /** The browser's cookies, Gatehouse's binding cookie among them. */
  jar: CookieJar;
}

/**
 * The first half of a connect link, over plain HTTP: open it, press Continue (which sets the
 * attempt's cookie in `jar`), consent at the demo app, and stop at the redirect back to
 * Gatehouse's callback; or the page that refused the link itself.
 */
export async function consentThroughLink(
  linkUrl: string,
  options: Omit<WalkOptions, 'beforeCallback'> = {},
): Promise<AtCallback | { refused: WalkResult }> {
  const gatehouse = new URL(linkUrl).origin;
  const jar = options.jar ?? new CookieJar();
  const landing = await fetch(linkUrl, { headers: { cookie: jar.header() } });
  const landingHtml = await landing.text();
  if (landing.status !== 200) {
    return {
      refused: {
        status: landing.status,
        url: new URL(linkUrl),
        html: landingHtml,
        redirectedTo: null,
      },
    };
  }
  const start = /<a[^>]+href="([^"]+\/start)"/.exec(landingHtml)?.[1];
  if (!start) throw new Error(`no Continue link on the connect page:\n${landingHtml}`);

  const isCallback = (url: URL) => url.origin === gatehouse && url.pathname === '/connect/callback';
  const callback = await consentAtDemoApp(
    new URL(start.replace(/&amp;/g, '&'), linkUrl),
    isCallback,
    { ...options, jar },
  );
  return { callback, jar };
}

/** The browser arriving at Gatehouse's callback with its cookies (none when `jar` is null). */
export async function returnToCallback(callback: URL, jar: CookieJar | null): Promise<WalkResult> {
  const res = await fetch(callback, {
    redirect: 'manual',
    headers: jar ? { cookie: jar.header() } : {},
  });
  jar?.store(res);
  const html = await res.text();
  const location = res.headers.get('location');
  return {
    status: res.status,
    url: callback,
    html,
    redirectedTo: location === null ? null : new URL(location, callback),
  };
}

/**
 * What a person does with a connect link, over plain HTTP: open it, press Continue, consent at
 * the demo app (a form with `username` and `decision`), and come back to Gatehouse's callback in
 * the same browser (cookies included).
 */
export async function walkConnectLink(
  linkUrl: string,
  options: WalkOptions = {},
): Promise<WalkResult> {
  const reached = await consentThroughLink(linkUrl, options);
  if ('refused' in reached) return reached.refused;
  await options.beforeCallback?.(reached.callback);
  return returnToCallback(reached.callback, reached.jar);
}
