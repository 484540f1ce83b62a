/**
 * The one guard on the paths catalog actions build from their input. The request to the app goes
 * through a WHATWG URL parser, which resolves dot segments (`/tasks/..` becomes `/`, and `%2e`
 * counts as a dot), turns `\` into `/` and starts the query at `?` and the fragment at `#`. An
 * input that makes such a segment would send the call to another path than its action's, one the
 * policy never graded, perhaps outside the app's API base.
 */

/** `.` and `..`, plain or percent-encoded, in any case. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** Why the app would not receive `path` as its action built it, or null when it would. */
export function unsafePath(path: string): { segment: string; problem: string } | null {
  if (!path.startsWith('/')) return { segment: path, problem: 'must start with "/"' };
  for (const segment of path.slice(1).split('/')) {
    // An empty segment is not resolved away, but it names another resource (`/tasks/` lists).
    if (segment === '') return { segment, problem: 'must not be empty' };
    if (DOT_SEGMENT.test(segment)) return { segment, problem: 'must not be "." or ".."' };
    if (/[?#\\]/.test(segment)) {
      return { segment, problem: 'must not contain "?", "#" or "\\"' };
    }
  }
  return null;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Where in `input` the value that became `segment` is, so the caller is told which field to
 * change; an empty path (the input as a whole) when no single field holds it.
 */
export function inputFieldOf(input: unknown, segment: string): (string | number)[] {
  const wanted = new Set([segment, decoded(segment)]);
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: input, path: [] }];
  for (let item = stack.shift(); item !== undefined; item = stack.shift()) {
    const { value, path } = item;
    if (typeof value === 'string' || typeof value === 'number') {
      if (wanted.has(String(value))) return path;
    } else if (Array.isArray(value)) {
      value.forEach((child, index) => stack.push({ value: child, path: [...path, index] }));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        stack.push({ value: child, path: [...path, key] });
      }
    }
  }
  return [];
}
