import { html, trustedHtml, type Html } from '../../connect/pages/html.js';
import { themeCss, type ResolvedBranding } from '../../connect/pages/theme.js';
import { CONSOLE_CSS } from './styles.js';

/** The console's sections, in the order of its navigation. */
export const SECTIONS = [
  { id: 'inbox', label: 'Inbox', path: 'inbox' },
  { id: 'calls', label: 'Calls', path: 'calls' },
  { id: 'apps', label: 'Apps', path: 'apps' },
  { id: 'policies', label: 'Policies', path: 'policies' },
  { id: 'connections', label: 'Connections', path: 'connections' },
  { id: 'notifications', label: 'Notifications', path: 'notifications' },
] as const;
export type SectionId = (typeof SECTIONS)[number]['id'];

/** Who is looking, as the header shows them, and what their sign-out form needs. */
export interface Viewer {
  name: string;
  email: string;
  roles: readonly string[];
  environment: string;
  /** `<PUBLIC_URL>/console/<environment>`: every console link is built from it. */
  base: string;
  formToken: string;
}

export interface ConsolePage {
  branding: ResolvedBranding;
  title: string;
  /** The section highlighted in the navigation; none on pages outside them. */
  section?: SectionId;
  viewer?: Viewer;
  body: Html;
}

/**
 * A console document. Sent with the hosted pages' CSP (no scripts, no framing, forms only to this
 * origin) and `strict-origin`: its forms post their origin, which the routes check.
 */
export function renderConsolePage(page: ConsolePage): string {
  const { branding, viewer } = page;
  const colorScheme = branding.mode === 'system' ? 'light dark' : branding.mode;
  const css = trustedHtml(themeCss(branding) + CONSOLE_CSS);
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <meta name="referrer" content="strict-origin" />
        <meta name="color-scheme" content="${colorScheme}" />
        <title>${page.title} · Gatehouse console</title>
        <style>
          ${css}
        </style>
      </head>
      <body>
        <a class="skip" href="#content">Skip to content</a>
        <header class="top">
          <span class="product">Gatehouse console</span>
          ${viewer && html`<span class="env" title="Environment">${viewer.environment}</span>`}
          ${
            viewer &&
            html`<nav class="sections" aria-label="Console">
              <ul>
                ${SECTIONS.map(
                  (section) =>
                    html`<li>
                      <a
                        href="${viewer.base}/${section.path}"
                        ${page.section === section.id ? trustedHtml('aria-current="page"') : ''}
                        >${section.label}</a
                      >
                    </li>`,
                )}
              </ul>
            </nav>`
          }
          ${
            viewer &&
            html`<div class="who">
              <span
                ><strong>${viewer.name}</strong> · ${viewer.email} ·
                ${viewer.roles.join(', ')}</span
              >
              <form method="post" action="${viewer.base}/sign-out">
                <input type="hidden" name="csrf" value="${viewer.formToken}" />
                <button class="quiet" type="submit">Sign out</button>
              </form>
            </div>`
          }
        </header>
        <main class="console" id="content">${page.body}</main>
      </body>
    </html> `.value;
}

/** A page that only says something: signed out, refused, not configured. */
export function renderNotice(options: {
  branding: ResolvedBranding;
  title: string;
  message: Html | string;
  action?: { href: string; label: string };
  viewer?: Viewer;
}): string {
  return renderConsolePage({
    branding: options.branding,
    title: options.title,
    ...(options.viewer ? { viewer: options.viewer } : {}),
    body: html`<div class="panel">
      <h1>${options.title}</h1>
      <p class="lead">${options.message}</p>
      ${
        options.action &&
        html`<p><a class="button" href="${options.action.href}">${options.action.label}</a></p>`
      }
    </div>`,
  });
}
