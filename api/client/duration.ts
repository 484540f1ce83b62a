/**
 * How long to wait, as Temporal's TypeScript SDK takes it: milliseconds as a number, or a string
 * with its unit (`'90s'`, `'10m'`, `'2h'`, `'1d'`, `'500ms'`).
 */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration in milliseconds; a malformed or negative one is a programming error and throws. */
export function durationMs(duration: Duration): number {
  if (typeof duration === 'number') {
    if (!Number.isFinite(duration) || duration < 0) {
      throw new RangeError(`not a duration: ${String(duration)}`);
    }
    return duration;
  }
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(duration);
  const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
  if (!match?.[1] || !unit) throw new RangeError(`not a duration: "${duration}"`);
  return Number(match[1]) * UNIT_MS[unit];
}
