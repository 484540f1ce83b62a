import { consentAtDemoApp } from './scripted-consent.js';

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
  const gatehouse = new URL(linkUrl).origin;
  const landing = await fetch(linkUrl);
  const landingHtml = await landing.text();
  if (landing.status !== 200)
    return { status: landing.status, url: new URL(linkUrl), html: landingHtml, redirectedTo: null };
  const start = /<a[^>]+href="([^"]+\/start)"/.exec(landingHtml)?.[1];
  if (!start) throw new Error(`no Continue link on the connect page:\n${landingHtml}`);

  const isCallback = (url: URL) => url.origin === gatehouse && url.pathname === '/connect/callback';
  const callback = await consentAtDemoApp(
    new URL(start.replace(/&amp;/g, '&'), linkUrl),
    isCallback,
    options,
  );
  await options.beforeCallback?.(callback);
  const res = await fetch(callback, { redirect: 'manual' });
  const html = await res.text();
  const location = res.headers.get('location');
  return {
    status: res.status,
    url: callback,
    html,
    redirectedTo: location === null ? null : new URL(location, callback),
  };
}
