import type { Html } from '../../connect/pages/html.js';
import { renderLayout } from '../../connect/pages/layout.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { APPROVAL_CSS } from './styles.js';

/**
 * The review page's referrer policy. The connect pages send none at all, but under
 * `no-referrer` a browser sends `Origin: null` with a form's POST (Fetch standard), which would
 * leave the decision POST nothing to check its origin against. `strict-origin` lets the real
 * origin through and still never sends a path, so the link's token goes nowhere: other sites
 * (a logo's host) see at most Gatehouse's origin, and our own request log sees the same.
 */
export const REVIEW_REFERRER_POLICY = 'strict-origin';

/** The connect pages' document, wider for a request's JSON, with the review page's referrer. */
export function renderReviewLayout(options: {
  branding: ResolvedBranding;
  title: string;
  card: Html;
  after?: Html | null;
}): string {
  return renderLayout({
    ...options,
    referrer: REVIEW_REFERRER_POLICY,
    extraCss: APPROVAL_CSS,
    width: 'wide',
  });
}
