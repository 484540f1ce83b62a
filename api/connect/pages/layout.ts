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
  /** The document's referrer policy; `no-referrer` unless a page must post its origin. */
  referrer?: 'no-referrer' | 'strict-origin';
  /** Styles of the page's own, after the shared ones. */
  extraCss?: string;
  /** Class of `<main>` and of the card, for pages that need room (`wide`). */
  width?: 'narrow' | 'wide';
}

/**
 * Connect URLs carry single-use tokens, hence no-referrer (the token must not leak to logos or
 * support sites) and noindex (in case a link is ever posted publicly).
 */
export function renderLayout(options: LayoutOptions): string {
  const { branding, title, card, after, referrer = 'no-referrer', extraCss = '' } = options;
  const colorScheme = branding.mode === 'system' ? 'light dark' : branding.mode;
  const css = trustedHtml(themeCss(branding) + BASE_CSS + extraCss);
  const wide = options.width === 'wide';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <meta name="referrer" content="${referrer}" />
        <meta name="color-scheme" content="${colorScheme}" />
        <title>${title}</title>
        <style>
          ${css}
        </style>
      </head>
      <body>
        <main class="${wide ? 'wide' : ''}">
          <div class="${wide ? 'card review' : 'card'}">${card}</div>
          ${after}
        </main>
      </body>
    </html> `.value;
}
