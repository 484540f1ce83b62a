/**
 * How deep JSON from outside nests, found without recursion. JSON.parse reads any depth, but
 * JSON.stringify (a Temporal payload, a jsonb parameter), ajv's compiler and most walks recurse,
 * and overflow their stack on JSON an app or server sent nested tens of thousands deep; these
 * checks run before any of them.
 */

/**
 * How deep an app's or MCP server's answer to a call may nest and still be carried: far deeper
 * than any real answer, and shallow enough for every recursive step after it.
 */
export const MAX_ANSWER_DEPTH = 512;

/** Whether JSON text nests deeper than `limit` (brackets inside strings do not count). */
export function textNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') {
      if (++depth > limit) return true;
    } else if (char === ']' || char === '}') depth--;
  }
  return false;
}

/** Whether a parsed JSON value nests deeper than `limit` (an array or object is one level). */
export function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: { item: unknown; depth: number }[] = [{ item: value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { item, depth } = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(item)) stack.push({ item: child, depth: depth + 1 });
  }
  return false;
}
