import type { CredentialScheme } from '../../../activities/credentials/schemes.js';
import { MAX_SECRET_BYTES } from '../../../activities/credentials/schemes.js';
import type { CredentialFormFields } from '../credential-form.js';
import { html, type Html } from './html.js';
import { renderLayout } from './layout.js';
import { alertIcon, initial, keep, linkIcon, lockIcon, supportLine } from './parts.js';
import { resolveBranding, type ResolvedBranding } from './theme.js';
import type { AppInfo, ConnectBranding } from './types.js';

export interface CredentialPageOptions {
  branding: ConnectBranding;
  app: AppInfo;
  scheme: CredentialScheme;
  /** The app's own words on where the credential is found and what it is for. */
  hint: string | null;
  /** Where the form posts: the link's own credential route. */
  formAction: string;
  fields: CredentialFormFields;
  /** What was wrong with the last post, shown above the form (the fields are never refilled). */
  problem?: { field: 'secret' | 'username' | 'password'; message: string } | null;
}

/**
 * As the approval page's: under `no-referrer` a browser posts the form with `Origin: null`, which
 * leaves the post nothing to check its origin against. `strict-origin` lets the origin through
 * and never a path, so the link's token still goes nowhere.
 */
export const CREDENTIAL_REFERRER_POLICY = 'strict-origin';

// Form controls are not in the shared sheet: only this page has them.
const FORM_CSS = [
  'form{margin-top:24px;text-align:left}',
  'label{display:block;margin:14px 0 6px;font-size:13px;font-weight:600}',
  'input[type=text],input[type=password]{display:block;width:100%;padding:10px 12px;border:1px solid var(--border);border-radius:var(--radius);background:var(--card);color:var(--text);font:inherit;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:14px}',
  'input:focus-visible{outline:2px solid var(--accent-text);outline-offset:1px}',
  'input[aria-invalid=true]{border-color:var(--danger)}',
  '.hint{margin-top:6px;font-size:12.5px;color:var(--subtle);overflow-wrap:anywhere}',
  'button.button{width:100%;border:0;font:inherit;font-weight:600;cursor:pointer}',
  '.problem{display:flex;gap:8px;margin-top:20px;padding:10px 12px;border-radius:var(--radius);background:var(--danger-soft);color:var(--danger);font-size:14px;text-align:left;overflow-wrap:anywhere}',
  '.problem svg{flex:none;margin-top:2px}',
].join('');

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

/** What the credential is called on the page, and the words for its use. */
export function credentialLabel(scheme: CredentialScheme): string {
  if (scheme.scheme === 'basic') return 'username and password';
  return scheme.scheme === 'bearer' ? 'access token' : 'API key';
}

function field(
  name: 'secret' | 'username' | 'password',
  label: string,
  type: 'text' | 'password',
  problem: CredentialPageOptions['problem'],
  described: boolean,
): Html {
  const invalid = problem?.field === name;
  return html`<label for="${name}">${label}</label>
    <input
      id="${name}"
      name="${name}"
      type="${type}"
      autocomplete="off"
      autocapitalize="off"
      spellcheck="false"
      maxlength="${MAX_SECRET_BYTES}"
      ${name === 'password' ? null : html`required`}
      ${invalid ? html`aria-invalid="true" aria-describedby="problem"` : null}
      ${!invalid && described ? html`aria-describedby="hint"` : null}
    />`;
}

/**
 * The page a connect link opens for an app that takes a credential: the app, what is asked for,
 * and a form posted to the same origin. No script (the CSP forbids it); the browser is asked not
 * to remember what is typed.
 */
export function renderCredentialPage(options: CredentialPageOptions): string {
  const branding = resolveBranding(options.branding);
  const { displayName } = branding;
  const appName = options.app.name;
  const what = credentialLabel(options.scheme);
  const problem = options.problem ?? null;
  const hint = options.hint?.trim() || null;
  const fields =
    options.scheme.scheme === 'basic'
      ? html`${field('username', `${appName} username`, 'text', problem, hint !== null)}
        ${field('password', `${appName} password`, 'password', problem, false)}`
      : field('secret', `${appName} ${what}`, 'password', problem, hint !== null);

  const card = html`<div class="pair">
      ${brandTile(branding)}<span class="connector" aria-hidden="true"
        ><i></i>${linkIcon(16)}<i></i></span
      ><span class="tile tile-app" aria-hidden="true">${initial(appName)}</span>
    </div>
    <h1>Connect ${keep(appName)} to ${keep(displayName)}</h1>
    <p class="lead">
      Enter your ${appName} ${what}. ${displayName} will use it to call ${appName} for you, and you
      can disconnect at any time.
    </p>
    ${
      problem
        ? html`<p class="problem" id="problem" role="alert">
            ${alertIcon(16)}<span>${problem.message}</span>
          </p>`
        : null
    }
    <form method="post" action="${options.formAction}" autocomplete="off">
      <input type="hidden" name="attempt" value="${options.fields.attempt}" />
      <input type="hidden" name="issued" value="${options.fields.issued}" />
      <input type="hidden" name="csrf" value="${options.fields.csrf}" />
      ${fields} ${hint ? html`<p class="hint" id="hint">${hint}</p>` : null}
      <button class="button" type="submit">Connect ${appName}</button>
    </form>
    <p class="fine">
      ${lockIcon(12)}Secured by Gatehouse. Your ${what} is stored encrypted and is never shown
      again.
    </p>`;

  return renderLayout({
    branding,
    title: `Connect ${appName} to ${displayName}`,
    card,
    after: supportLine(branding),
    referrer: CREDENTIAL_REFERRER_POLICY,
    extraCss: FORM_CSS,
  });
}
