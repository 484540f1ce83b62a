import { CookieJar } from '../../infra/demo-app/cookie-jar.js';

export interface PageAnswer {
  status: number;
  html: string;
  location: URL | null;
}

/** Where a walk through a connect link to a remote MCP app ended. */
export type McpWalk =
  /** Gatehouse answered the link or its start with a page (an error, or no redirect). */
  | { stoppedAt: 'link' | 'start'; page: PageAnswer }
  | {
      stoppedAt: 'callback';
      /** The authorize URL Gatehouse sent the browser to, as the authorization server got it. */
      authorizeUrl: URL;
      /** Where the authorization server sent the browser back to. */
      callbackUrl: URL;
      /** Gatehouse's answer at its callback (the success page, or an error page). */
      page: PageAnswer;
      jar: CookieJar;
    };

async function get(url: URL | string, jar: CookieJar): Promise<PageAnswer> {
  const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.store(response);
  const location = response.headers.get('location');
  return {
    status: response.status,
    html: await response.text(),
    location: location === null ? null : new URL(location, url),
  };
}

/**
 * What a person's browser does with a connect link to an MCP app whose authorization server
 * consents at once (the SDK's example server): open the link, press Continue, follow Gatehouse's
 * redirect to the authorize URL, and come back to the callback with the same cookies.
 */
export async function walkMcpLink(
  linkUrl: string,
  options: {
    jar?: CookieJar;
    beforeCallback?: () => Promise<void>;
    /** Changes the authorization server's answer before the browser brings it back. */
    rewriteCallback?: (callback: URL) => void;
  } = {},
): Promise<McpWalk> {
  const jar = options.jar ?? new CookieJar();
  const landing = await get(linkUrl, jar);
  const start = /<a[^>]+href="([^"]+\/start)"/.exec(landing.html)?.[1];
  if (landing.status !== 200 || !start) return { stoppedAt: 'link', page: landing };
  const started = await get(new URL(start.replace(/&amp;/g, '&'), linkUrl), jar);
  if (started.status !== 302 || !started.location) return { stoppedAt: 'start', page: started };
  const authorizeUrl = started.location;
  const consented = await get(authorizeUrl, jar);
  if (!consented.location) {
    throw new Error(
      `the authorization server answered ${String(consented.status)}: ${consented.html}`,
    );
  }
  await options.beforeCallback?.();
  const callbackUrl = new URL(consented.location);
  options.rewriteCallback?.(callbackUrl);
  const page = await get(callbackUrl, jar);
  return { stoppedAt: 'callback', authorizeUrl, callbackUrl, page, jar };
}
