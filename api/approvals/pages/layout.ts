import { html, trustedHtml, type Html } from '../../connect/pages/html.js';
import { BASE_CSS } from '../../connect/pages/styles.js';
import { themeCss, type ResolvedBranding } from '../../connect/pages/theme.js';
import { APPROVAL_CSS } from './styles.js';

/**
 * The review page's referrer policy. The connect pages send none at all, but under
 * `no-referrer` a browser sends `Origin: null` with a form's POST (Fetch standard), which would
 * leave the decision POST nothing to check its origin against. `strict-origin` lets the real
 * origin through and still never sends a path, so the link's token goes nowhere: other sites
 * (a logo's host) see at most Gatehouse's origin, and our own request log sees the same.
 */
export const REVIEW_REFERRER_POLICY = 'strict-origin';

/**
 * The connect pages' document (api/connect/pages/layout.ts), wider and with the approval rules:
 * a request's JSON needs room. Sent with the same CSP, which also allows the form to post only
 * here (`form-action 'self'`).
 */
export function renderReviewLayout(options: {
  branding: ResolvedBranding;
  title: string;
  card: Html;
  after?: Html | null;
}): string {
  const { branding, title, card, after } = options;
  const colorScheme = branding.mode === 'system' ? 'light dark' : branding.mode;
  const css = trustedHtml(themeCss(branding) + BASE_CSS + APPROVAL_CSS);
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <meta name="referrer" content="${REVIEW_REFERRER_POLICY}" />
        <meta name="color-scheme" content="${colorScheme}" />
        <title>${title}</title>
        <style>
          ${css}
        </style>
      </head>
      <body>
        <main class="wide">
          <div class="card review">${card}</div>
          ${after}
        </main>
      </body>
    </html> `.value;
}
