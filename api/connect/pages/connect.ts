import { html, safeUrl, type Html } from './html.js';
import { renderLayout } from './layout.js';
import { checkIcon, initial, keep, linkIcon, lockIcon, supportLine } from './parts.js';
import { resolveBranding, type ResolvedBranding } from './theme.js';
import type { AppInfo, ConnectBranding, RequestedScope } from './types.js';

export interface ConnectPageOptions {
  branding: ConnectBranding;
  app: AppInfo;
  /** Who is connecting, as the customer knows them (e.g. an email), shown for reassurance. */
  userLabel?: string;
  /** Where the button goes: the route that starts the OAuth redirect. */
  startUrl: string;
  scopes: readonly RequestedScope[];
}

function brandTile(branding: ResolvedBranding): Html {
  if (branding.logoUrl !== null) {
    return html`<span class="tile tile-logo"
      ><img src="${branding.logoUrl}" alt="${branding.displayName}"
    /></span>`;
  }
  return html`<span class="tile tile-brand" aria-hidden="true"
    >${initial(branding.displayName)}</span
  >`;
}

/** URL-shaped scopes (Google's) are long; let them wrap after slashes rather than mid-word. */
function scopeText(scope: string): Html {
  const parts = scope.split(/(?<=\/)/);
  return html`${parts.map((part, i) => (i === 0 ? part : html`<wbr />${part}`))}`;
}

/** A scope in words when the catalog has them; its name at the app otherwise. */
function permission(requested: RequestedScope): Html | string {
  const words = requested.description?.trim();
  return words ? words : scopeText(requested.scope.trim());
}

function permissions(scopes: readonly RequestedScope[]): Html | null {
  const shown = scopes.filter((requested) => requested.scope.trim() !== '');
  if (shown.length === 0) return null;
  return html`<section class="perms" aria-labelledby="perms-title">
    <h2 id="perms-title">Requested permissions</h2>
    <ul>
      ${shown.map(
        (requested) => html`<li>${checkIcon(16)}<span>${permission(requested)}</span></li>`,
      )}
    </ul>
  </section>`;
}

/**
 * The page a connect link opens. The button is a plain link, so the flow works without
 * JavaScript (which the CSP forbids anyway).
 */
export function renderConnectPage(options: ConnectPageOptions): string {
  const branding = resolveBranding(options.branding);
  const { displayName } = branding;
  const appName = options.app.name;
  const startUrl = safeUrl(options.startUrl);
  const label = `Continue to ${appName}`;
  const button =
    startUrl === null
      ? html`<a class="button" role="link" aria-disabled="true">${label}</a>`
      : html`<a class="button" href="${startUrl}">${label}</a>`;
  const user = options.userLabel?.trim();

  const card = html`<div class="pair">
      ${brandTile(branding)}<span class="connector" aria-hidden="true"
        ><i></i>${linkIcon(16)}<i></i></span
      ><span class="tile tile-app" aria-hidden="true">${initial(appName)}</span>
    </div>
    <h1>Connect ${keep(appName)} to ${keep(displayName)}</h1>
    <p class="lead">
      You&rsquo;ll be sent to ${appName} to sign in and approve access. You can revoke it at any
      time.
    </p>
    ${user ? html`<p class="user">Connecting as <strong>${user}</strong></p>` : null}
    ${permissions(options.scopes)} ${button}
    <p class="fine">
      ${lockIcon(12)}Secured by Gatehouse. Your ${appName} password is never shared with
      ${displayName}.
    </p>`;

  return renderLayout({
    branding,
    title: `Connect ${appName} to ${displayName}`,
    card,
    after: supportLine(branding),
  });
}
