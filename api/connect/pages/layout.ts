import { html, trustedHtml, type Html } from './html.js';
import { BASE_CSS } from './styles.js';
import { themeCss, type ResolvedBranding } from './theme.js';

/**
 * Sent as a header by the route. Nothing may be fetched but images (customer logos, which live
 * anywhere); inline styles are the only styles; no scripts at all; and the pages cannot be
 * framed, because a framed connect page is a clickjacking target for the consent button.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface LayoutOptions {
  branding: ResolvedBranding;
  title: string;
  /** Goes inside the card. */
  card: Html;
  /** Goes under the card. */
  after?: Html | null;
}

/**
 * Connect URLs carry single-use tokens, hence no-referrer (the token must not leak to logos or
 * support sites) and noindex (in case a link is ever posted publicly).
 */
export function renderLayout({ branding, title, card, after }: LayoutOptions): string {
  const colorScheme = branding.mode === 'system' ? 'light dark' : branding.mode;
  const css = trustedHtml(themeCss(branding) + BASE_CSS);
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <meta name="referrer" content="no-referrer" />
        <meta name="color-scheme" content="${colorScheme}" />
        <title>${title}</title>
        <style>
          ${css}
        </style>
      </head>
      <body>
        <main>
          <div class="card">${card}</div>
          ${after}
        </main>
      </body>
    </html> `.value;
}
