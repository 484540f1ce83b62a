/**
 * Customers pick any accent colour, so the shades we draw with it are derived here to keep
 * text readable (WCAG AA, 4.5:1) whatever they chose. Inputs are validated '#rrggbb' strings.
 */
type Rgb = readonly [number, number, number];

const WHITE = '#ffffff';
const INK = '#101828';
const AA = 4.5;

function parse(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function format(rgb: Rgb): string {
  return `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

function linear(channel: number): number {
  const s = channel / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}

function luminance(hex: string): number {
  const [r, g, b] = parse(hex);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

export function contrast(a: string, b: string): number {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** `weight` is the share of `b` in the result. */
export function mix(a: string, b: string, weight: number): string {
  const [ar, ag, ab] = parse(a);
  const [br, bg, bb] = parse(b);
  const w = Math.min(1, Math.max(0, weight));
  return format([ar + (br - ar) * w, ag + (bg - ag) * w, ab + (bb - ab) * w]);
}

/** White on the accent when it is readable (brands usually expect it), otherwise dark ink. */
export function foregroundOn(background: string): string {
  if (contrast(WHITE, background) >= AA) return WHITE;
  return contrast(INK, background) >= contrast(WHITE, background) ? INK : WHITE;
}

/**
 * The accent as link/outline colour on `surface`: the accent itself when it is readable there,
 * otherwise the least-altered step towards white (dark themes) or ink (light themes) that is.
 */
export function readableOn(color: string, surface: string): string {
  const toward = luminance(surface) < 0.2 ? WHITE : INK;
  for (let step = 0; step <= 20; step++) {
    const candidate = mix(color, toward, step / 20);
    if (contrast(candidate, surface) >= AA) return candidate;
  }
  return toward;
}
