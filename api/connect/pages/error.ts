import { html, safeUrl, type Html } from './html.js';
import { renderLayout } from './layout.js';
import { alertIcon, brandHeader, supportLabel, supportLine } from './parts.js';
import { resolveBranding } from './theme.js';
import type { AppInfo, ConnectBranding } from './types.js';

export interface ErrorPageOptions {
  branding: ConnectBranding;
  /** Absent when the failure happened before we knew which app (e.g. an unknown link). */
  app?: AppInfo;
  /** Short and human, e.g. "This link has expired". */
  title: string;
  /** What the user can do about it, e.g. "Ask Acme Corp for a new link." */
  message: string | Html;
  /** Machine-readable, shown small so that support can look the failure up. */
  code: string;
  retryUrl?: string;
  /**
   * The way on goes through the product that sent the user (a new link, its setup): its support
   * link, when it has one, is then the page's button rather than a line under the card.
   */
  supportFirst?: boolean;
}

export function renderErrorPage(options: ErrorPageOptions): string {
  const branding = resolveBranding(options.branding);
  const retryUrl = safeUrl(options.retryUrl);
  const appName = options.app?.name;
  const supportButton =
    retryUrl === null && options.supportFirst === true && branding.supportUrl !== null
      ? html`<a class="button" href="${branding.supportUrl}" rel="noopener noreferrer"
          >${supportLabel(branding)}</a
        >`
      : null;

  const card = html`${brandHeader(branding)}
    <div class="status status-error">${alertIcon(28)}</div>
    ${appName ? html`<p class="eyebrow">Connecting ${appName}</p>` : null}
    <h1>${options.title}</h1>
    <p class="lead">${options.message}</p>
    ${retryUrl === null ? null : html`<a class="button" href="${retryUrl}">Try again</a>`}
    ${supportButton}
    <p class="code">Error code <code>${options.code}</code></p>`;

  return renderLayout({
    branding,
    title: appName ? `${options.title} · ${appName}` : options.title,
    card,
    after: supportButton === null ? supportLine(branding) : null,
  });
}
