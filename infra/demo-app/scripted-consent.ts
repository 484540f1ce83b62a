import { CookieJar } from './cookie-jar.js';

export interface ConsentOptions {
  username?: string;
  decision?: 'allow' | 'deny';
  /** Called with each consent page's HTML. */
  onPage?: (html: string) => void;
  /**
   * The browser's cookies, kept across calls (and across origins on one host, as a browser's
   * are across ports); default: a fresh jar, as in a new private window.
   */
  jar?: CookieJar;
}

/**
 * A person at the demo app: follow redirects from `start`, answer its consent form (`username`,
 * `decision`), and stop at the first redirect to a URL that `isDestination` accepts (the
 * client's redirect URI), which is returned without being fetched.
 */
export async function consentAtDemoApp(
  start: URL,
  isDestination: (url: URL) => boolean,
  options: ConsentOptions = {},
): Promise<URL> {
  const jar = options.jar ?? new CookieJar();
  let url = start;
  let form: string | undefined;
  for (let hop = 0; hop < 15; hop += 1) {
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
      url = new URL(location, url);
      if (isDestination(url)) return url;
      continue;
    }
    if (res.status !== 200)
      throw new Error(`demo app answered ${res.status} at ${url.href}:\n${html}`);
    options.onPage?.(html);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`no consent form at ${url.href}:\n${html}`);
    url = new URL(action, url);
    form = new URLSearchParams({
      username: options.username ?? 'alice',
      decision: options.decision ?? 'allow',
    }).toString();
  }
  throw new Error('the consent flow did not reach its destination');
}
