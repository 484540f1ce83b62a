import { html, safeUrl } from './html.js';
import { renderLayout } from './layout.js';
import { brandHeader, checkIcon, keep } from './parts.js';
import { resolveBranding } from './theme.js';
import type { AppInfo, ConnectBranding } from './types.js';

export interface SuccessPageOptions {
  branding: ConnectBranding;
  app: AppInfo;
  /** Back into the customer's product; without it (or if unsafe) the user is told to close. */
  redirectUrl?: string;
}

export function renderSuccessPage(options: SuccessPageOptions): string {
  const branding = resolveBranding(options.branding);
  const { displayName } = branding;
  const appName = options.app.name;
  const redirectUrl = safeUrl(options.redirectUrl);

  const card = html`${brandHeader(branding)}
    <div class="status status-success">${checkIcon(28)}</div>
    <h1>${keep(appName)} is connected</h1>
    <p class="lead">${displayName} can now work with your ${appName} account.</p>
    ${
      redirectUrl === null
        ? html`<p class="close">You can close this window.</p>`
        : html`<a class="button" href="${redirectUrl}">Return to ${displayName}</a>`
    }`;

  return renderLayout({ branding, title: `${appName} is connected`, card });
}
