/**
 * The one reading of a proxy call's path: policy judges it, audit and the approver see it, and
 * the app receives it, byte for byte. A governed agent chooses how to spell the path, and apps
 * disagree on what spellings mean, so the spelling is settled here once, before policy: escapes
 * of plain characters are undone (`%74asks` is `tasks`), runs of slashes are one slash, and what
 * an app could read as another path than the one judged is refused rather than guessed at. Case
 * is kept: the app may tell `/Tasks` from `/tasks`; conditions.ts judges every case.
 */

export type ProxyPath = { path: string } | { problem: string };

/** RFC 3986 unreserved characters: an escape of one names the same resource as the character. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * Characters a URL parser escapes in a path on the way to the app (the WHATWG path
 * percent-encode set, less `?` and `#`, which never reach here), and anything beyond ASCII:
 * escaped here so that the path judged is the path sent.
 */
const ESCAPED_ON_THE_WAY = /["<>`{}]|[\u{80}-\u{10FFFF}]+/gu;

/** `.` and `..`, which URL parsers resolve away, once escapes of plain characters are undone. */
const DOT_SEGMENT = /^\.{1,2}$/;

function tidyEscapes(raw: string): ProxyPath {
  let path = '';
  for (let at = 0; at < raw.length; at += 1) {
    const char = raw.charAt(at);
    if (char !== '%') {
      path += char;
      continue;
    }
    const hex = raw.slice(at + 1, at + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return { problem: 'has a malformed percent-encoding' };
    const code = Number.parseInt(hex, 16);
    // One app splits segments at an escaped slash or backslash and another does not: the path
    // judged would not be the path the app reads.
    if (code === 0x2f) return { problem: 'must not contain an encoded slash (%2F)' };
    if (code === 0x5c) return { problem: 'must not contain a backslash' };
    if (code < 0x20 || code === 0x7f) {
      return { problem: 'must not contain an encoded control character (%00-%1F, %7F)' };
    }
    const decoded = String.fromCharCode(code);
    path += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
    at += 2;
  }
  return { path };
}

/**
 * The canonical form of `raw`, the path below `/v1/proxy/{app}/` as sent (without its query), or
 * why the app could not be sent one path that is certainly the one judged.
 */
export function canonicalProxyPath(raw: string): ProxyPath {
  if (raw.includes('\\')) return { problem: 'must not contain a backslash' };
  if (raw.includes('#')) return { problem: 'must not contain "#"' };
  const tidied = tidyEscapes(raw);
  if (!('path' in tidied)) return tidied;
  let escaped: string;
  try {
    // Overlong and truncated sequences (`%C0%AF` for `/`) are the old way past a path check.
    decodeURIComponent(tidied.path);
    escaped = tidied.path.replace(ESCAPED_ON_THE_WAY, (chars) => encodeURIComponent(chars));
  } catch {
    return { problem: 'is not UTF-8 once percent-decoded' };
  }
  if (escaped.split('/').some((segment) => DOT_SEGMENT.test(segment))) {
    return { problem: 'must not contain "." or ".." segments' };
  }
  // The path follows the slash after `{app}`: a leading slash is a run of slashes. A run is one
  // slash to most apps and an empty segment to a few; the reading they share is what is sent.
  return { path: escaped.replace(/\/{2,}/g, '/').replace(/^\//, '') };
}
