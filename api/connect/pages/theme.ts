import { foregroundOn, mix, readableOn } from './color.js';
import { safeColor, safeUrl } from './html.js';
import { DEFAULT_BRANDING, type ConnectBranding } from './types.js';

export interface Palette {
  page: string;
  card: string;
  border: string;
  text: string;
  muted: string;
  subtle: string;
  tile: string;
  success: string;
  danger: string;
  /** Logos are drawn for light backgrounds, so dark mode gives them a light plate. */
  logoPlate: string;
  shadow: string;
}

// muted and subtle stay above 4.5:1 against `card` in both palettes.
export const LIGHT_PALETTE: Palette = {
  page: '#f3f4f6',
  card: '#ffffff',
  border: '#e4e7ec',
  text: '#101828',
  muted: '#475467',
  subtle: '#667085',
  tile: '#f2f4f7',
  success: '#067647',
  danger: '#b42318',
  logoPlate: 'transparent',
  shadow: '0 1px 2px rgba(16,24,40,.04), 0 12px 32px -8px rgba(16,24,40,.12)',
};

export const DARK_PALETTE: Palette = {
  page: '#0b0d12',
  card: '#161a22',
  border: '#2a303c',
  text: '#f2f4f7',
  muted: '#b4bcc8',
  subtle: '#9098a6',
  tile: '#222834',
  success: '#47cd89',
  danger: '#f97066',
  logoPlate: '#ffffff',
  shadow: '0 1px 2px rgba(0,0,0,.3), 0 16px 40px -12px rgba(0,0,0,.6)',
};

/** Branding after validation: everything here is safe to place in markup or CSS as is. */
export interface ResolvedBranding {
  displayName: string;
  /**
   * The product that sent the person here, by the name they know it by; null while the
   * environment has not named it, since the default name is ours and means nothing to them.
   */
  product: string | null;
  accent: string;
  logoUrl: string | null;
  supportUrl: string | null;
  mode: ConnectBranding['theme']['mode'];
  radius: number;
}

const DEFAULT_RADIUS = 10;
const MAX_RADIUS = 28;

/** The display name when it names the customer's product, not the default one (see above). */
export function productName(branding: Pick<ConnectBranding, 'displayName'>): string | null {
  const name = branding.displayName.trim();
  return name === '' || name === DEFAULT_BRANDING.displayName ? null : name;
}

export function resolveBranding(branding: ConnectBranding): ResolvedBranding {
  const radius = branding.theme.radius;
  return {
    displayName: branding.displayName.trim() || DEFAULT_BRANDING.displayName,
    product: productName(branding),
    accent: safeColor(branding.accentColor, DEFAULT_BRANDING.accentColor),
    logoUrl: safeUrl(branding.logoUrl),
    supportUrl: safeUrl(branding.supportUrl),
    mode: ['light', 'dark', 'system'].includes(branding.theme.mode)
      ? branding.theme.mode
      : 'system',
    radius:
      radius !== undefined && Number.isFinite(radius)
        ? Math.round(Math.min(MAX_RADIUS, Math.max(0, radius)))
        : DEFAULT_RADIUS,
  };
}

function paletteVariables(palette: Palette, accent: string): string {
  return [
    `--page:${palette.page}`,
    `--card:${palette.card}`,
    `--border:${palette.border}`,
    `--text:${palette.text}`,
    `--muted:${palette.muted}`,
    `--subtle:${palette.subtle}`,
    `--tile:${palette.tile}`,
    `--success:${palette.success}`,
    `--success-soft:${mix(palette.card, palette.success, 0.14)}`,
    `--danger:${palette.danger}`,
    `--danger-soft:${mix(palette.card, palette.danger, 0.14)}`,
    `--accent-text:${readableOn(accent, palette.card)}`,
    `--logo-plate:${palette.logoPlate}`,
    `--shadow:${palette.shadow}`,
  ].join(';');
}

/** The custom properties that carry the branding; the static rules in styles.ts consume them. */
export function themeCss(branding: ResolvedBranding): string {
  const shared = `--accent:${branding.accent};--accent-fg:${foregroundOn(branding.accent)};--radius:${branding.radius}px`;
  const light = paletteVariables(LIGHT_PALETTE, branding.accent);
  const dark = paletteVariables(DARK_PALETTE, branding.accent);
  switch (branding.mode) {
    case 'light':
      return `:root{color-scheme:light;${shared};${light}}`;
    case 'dark':
      return `:root{color-scheme:dark;${shared};${dark}}`;
    case 'system':
      return (
        `:root{color-scheme:light dark;${shared};${light}}` +
        `@media (prefers-color-scheme: dark){:root{${dark}}}`
      );
  }
}
