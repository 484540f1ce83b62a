import { html, type Html } from '../../connect/pages/html.js';

/** Pages run no script, so times are shown in UTC, to the second, with a machine-readable twin. */
export function utcTime(iso: string): Html {
  const shown = `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  return html`<time datetime="${iso}">${shown}</time>`;
}

/** "1 hour", "90 minutes", "2 days": the caller's retry window in words. */
export function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (seconds >= size && seconds % size === 0) {
      const count = seconds / size;
      return `${count} ${name}${count === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
