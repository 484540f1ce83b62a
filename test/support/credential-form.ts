import { CookieJar } from '../../infra/demo-app/cookie-jar.js';

/** The hosted credential page as a browser received it, with its form's hidden fields. */
export interface ShownForm {
  status: number;
  html: string;
  headers: Headers;
  action: string;
  fields: { attempt: string; issued: string; csrf: string };
}

export function formOf(response: Response, html: string): ShownForm {
  const hidden = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
  return {
    status: response.status,
    html,
    headers: response.headers,
    action: /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '',
    fields: { attempt: hidden('attempt'), issued: hidden('issued'), csrf: hidden('csrf') },
  };
}

/** Opens a connect link in the browser of `jar`: the credential page and its form. */
export async function openForm(url: string, jar: CookieJar): Promise<ShownForm> {
  const response = await fetch(url, { headers: { cookie: jar.header() }, redirect: 'manual' });
  jar.store(response);
  return formOf(response, await response.text());
}

/** Posts the form as that browser posts it, with `body` typed into its fields. */
export async function postForm(
  form: ShownForm,
  jar: CookieJar,
  body: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ response: Response; html: string }> {
  const response = await fetch(form.action, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: jar.header(),
      ...headers,
    },
    body: new URLSearchParams({ ...form.fields, ...body }).toString(),
    redirect: 'manual',
  });
  jar.store(response);
  return { response, html: await response.text() };
}

/**
 * A user enters `body` on the page of the connect link `url` in a new browser: the connection id
 * the page sends them back with (empty when it did not say connected).
 */
export async function enterCredential(url: string, body: Record<string, string>): Promise<string> {
  const jar = new CookieJar();
  const form = await openForm(url, jar);
  const { response } = await postForm(form, jar, body);
  const back = new URL(response.headers.get('location') ?? '', 'http://invalid');
  return back.searchParams.get('status') === 'connected'
    ? (back.searchParams.get('connection_id') ?? '')
    : '';
}
