import { html, type Html } from './html.js';
import type { ResolvedBranding } from './theme.js';

// Icons are inline SVG because the pages may load nothing from elsewhere (see layout.ts).
const svg = (size: number, paths: Html): Html =>
  html`<svg
    width="${size}"
    height="${size}"
    viewBox="0 0 24 24"
    fill="none"
    stroke="currentColor"
    stroke-width="2"
    stroke-linecap="round"
    stroke-linejoin="round"
    aria-hidden="true"
    focusable="false"
  >
    ${paths}
  </svg>`;

export const checkIcon = (size: number): Html => svg(size, html`<path d="M20 6 9 17l-5-5" />`);

export const lockIcon = (size: number): Html =>
  svg(
    size,
    html`<rect x="4" y="11" width="16" height="10" rx="2" /><path d="M8 11V7a4 4 0 0 1 8 0v4" />`,
  );

export const alertIcon = (size: number): Html =>
  svg(
    size,
    html`<circle cx="12" cy="12" r="9.5" /><path d="M12 7.5v5.5" /><path d="M12 16.5h.01" />`,
  );

export const linkIcon = (size: number): Html =>
  svg(
    size,
    html`<path d="M8 7H5a5 5 0 0 0 0 10h3" /><path d="M16 7h3a5 5 0 0 1 0 10h-3" /><path
        d="M8 12h8"
      />`,
  );

/** A date, an id or a name that must read as one word: kept on one line where it fits. */
export function keep(text: string): Html {
  return html`<span class="keep">${text}</span>`;
}

/** A first letter to stand in for a missing logo; decorative, as the name is always in text. */
export function initial(name: string): string {
  return (Array.from(name.trim())[0] ?? '?').toUpperCase();
}

/** The customer's logo (alt = their name) or, without one, a monogram beside their name. */
export function brandHeader(branding: ResolvedBranding): Html {
  if (branding.logoUrl !== null) {
    return html`<div class="brand">
      <span class="logo"><img src="${branding.logoUrl}" alt="${branding.displayName}" /></span>
    </div>`;
  }
  return html`<div class="brand">
    <span class="mono" aria-hidden="true">${initial(branding.displayName)}</span
    ><span>${branding.displayName}</span>
  </div>`;
}

/** What the support link says: whose support it is, when the product has a name. */
export function supportLabel(branding: ResolvedBranding): string {
  return branding.product === null ? 'Contact support' : `Contact ${branding.product} support`;
}

export function supportLine(branding: ResolvedBranding): Html | null {
  if (branding.supportUrl === null) return null;
  return html`<p class="help">
    Need help?
    <a href="${branding.supportUrl}" target="_blank" rel="noopener noreferrer"
      >${supportLabel(branding)}</a
    >
  </p>`;
}
