import { CookieJar } from '../demo-app/cookie-jar.js';
import { DEV_PASSWORD } from './accounts.js';

export interface SignInOptions {
  /** Default DEV_PASSWORD. */
  password?: string;
  /**
   * The browser's cookies, kept across calls (and origins on one host, as a browser's are across
   * ports); default: a fresh jar, as in a new private window.
   */
  jar?: CookieJar;
  /** The client's redirect URI: where the walk stops, without fetching it. */
  isDestination: (url: URL) => boolean;
  /** Called with each page the provider shows (its sign-in form). */
  onPage?: (html: string) => void;
}

export type SignInOutcome =
  | { reached: URL }
  /** The provider answered with a page and no way on: a refused sign-in, or its error page. */
  | { refused: { status: number; url: URL; html: string } };

/**
 * A person at the dev sign-in provider, over plain HTTP: follow redirects from `start` (an
 * authorization URL, or the console's sign-in address that redirects to one), fill in the
 * sign-in form with `email` and the password, submit any other form the provider shows as a
 * browser would (its hidden fields), and stop at the first redirect `isDestination` accepts.
 * The one copy of this walk: the tests (test/support/identity-provider.ts) and the benchmark's
 * console scenario both sign in with it.
 */
export async function walkSignIn(
  start: URL,
  email: string,
  options: SignInOptions,
): Promise<SignInOutcome> {
  const jar = options.jar ?? new CookieJar();
  let url = start;
  let form: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: form.toString() }),
    });
    jar.store(res);
    const html = await res.text();
    const location = res.headers.get('location');
    const submitted = form !== undefined;
    form = undefined;
    if (location !== null) {
      url = new URL(location, url);
      if (options.isDestination(url)) return { reached: url };
      continue;
    }
    // A form answered with a page (its own again, with an error) is a refusal, as is any error.
    if (res.status !== 200 || (submitted && /name="email"/.test(html))) {
      return { refused: { status: res.status, url, html } };
    }
    options.onPage?.(html);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) return { refused: { status: res.status, url, html } };
    url = new URL(action.replaceAll('&amp;', '&'), url);
    form = hiddenFields(html);
    if (/name="email"/.test(html)) {
      form.set('email', email);
      form.set('password', options.password ?? DEV_PASSWORD);
    }
  }
  throw new Error(`the sign-in from ${start.href} did not reach its destination`);
}

/** Signs in as `email` and returns the redirect to the client; throws when it is refused. */
export async function signInAs(start: URL, email: string, options: SignInOptions): Promise<URL> {
  const outcome = await walkSignIn(start, email, options);
  if ('refused' in outcome) {
    const { status, url, html } = outcome.refused;
    throw new Error(
      `signing in as ${email} was refused (${String(status)} at ${url.href}):\n${html}`,
    );
  }
  return outcome.reached;
}

/** The hidden fields of a page's form (oidc-provider's own forms carry their state in them). */
function hiddenFields(html: string): URLSearchParams {
  const fields = new URLSearchParams();
  for (const [input] of html.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input)?.[1];
    const value = /value="([^"]*)"/.exec(input)?.[1] ?? '';
    if (name !== undefined) fields.set(name, value.replaceAll('&amp;', '&'));
  }
  return fields;
}
