import { caseFolded } from './case-folded.js';

/**
 * The readings an app may make of a proxy call's path. The proxy sends one canonical path
 * (api/calls/proxy-path.ts), but how the app then matches it is the app's business: Express and
 * many others ignore case and a trailing slash, Java servers drop `;params`, Windows servers
 * trailing dots, and a few decode twice. The service cannot know which, so a condition is judged
 * on each reading, and where they disagree its outcome depends on the app: evaluatePolicy then
 * takes whichever outcome is stricter, so a deny or ask that holds on any reading applies and an
 * allow applies only where it holds on all of them.
 */

export interface PathReading {
  /** Decoded, with a leading `/`: `request.path`. */
  path: string;
  /** Percent-encoded, with a leading `/`: `request.raw_path`. */
  rawPath: string;
  /**
   * Whether the condition is read case-insensitively on this reading: its string literals and
   * the call's strings case-folded (case-folded.ts).
   */
  ignoringCase: boolean;
  /** How the app would have read the path, for the audit's reason. */
  label: string;
}

function decodedOnce(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The most lenient reading: decoded once more, case-folded, each segment without `;params` or
 * trailing dots, dot segments resolved, empty segments and a trailing slash dropped.
 */
function leniently(path: string): string {
  const segments: string[] = [];
  for (const part of caseFolded(decodedOnce(path)).split('/')) {
    const segment = part.replace(/;.*$/su, '');
    if (segment === '..') segments.pop();
    else if (segment !== '.') {
      const trimmed = segment.replace(/\.+$/u, '');
      if (trimmed !== '') segments.push(trimmed);
    }
  }
  return `/${segments.join('/')}`;
}

/** Sub-delimiters, `:` and `@`, which a path carries unescaped (RFC 3986 pchar). */
const PATH_SAFE_ESCAPES = /%(?:24|26|2B|2C|3B|3D|3A|40)/g;

/** The escaped form of a decoded path, for a reading's `raw_path`. */
function escaped(path: string): string {
  return path
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(PATH_SAFE_ESCAPES, (escape) =>
        decodeURIComponent(escape),
      ),
    )
    .join('/');
}

/**
 * The path as sent, then read ignoring case, then read most leniently where that differs:
 * judged on each, a condition about the path cannot be gone around by a spelling the app takes
 * for the same path.
 */
export function pathReadings(path: string, rawPath: string): PathReading[] {
  const readings: PathReading[] = [
    { path, rawPath, ignoringCase: false, label: 'as sent' },
    {
      path: caseFolded(path),
      rawPath: caseFolded(rawPath),
      ignoringCase: true,
      label: 'read ignoring case',
    },
  ];
  const lenient = { path: leniently(path), rawPath: caseFolded(escaped(leniently(path))) };
  if (lenient.path !== caseFolded(path) || lenient.rawPath !== caseFolded(rawPath)) {
    readings.push({ ...lenient, ignoringCase: true, label: 'read most leniently' });
  }
  return readings;
}
