/**
 * What an imported operation is called: `<app>.<name>`, with `name` in the catalog's own shape
 * (`acme.create_task`, `github.list_repos`): lower-case letters, digits and single underscores,
 * starting and ending with a letter or digit, at most ACTION_NAME_MAX characters. That one shape
 * fits everywhere a name goes: a policy rule's `action` (`[a-z0-9_*]`), the call workflow's
 * summary, a URL path segment, and Gatehouse's MCP tool name `<app>__<name>` (MCP clients take
 * `[A-Za-z0-9_-]{1,128}`; with a 40-character app id, 80 leaves room for the separator; and no
 * name holds `__`, so the separator is never ambiguous).
 */
export const ACTION_NAME = /^[a-z0-9](?:[a-z0-9]|_(?!_))*$/;

/** GitHub's longest operationId is 74 characters. */
export const ACTION_NAME_MAX = 80;

/**
 * An operationId (or `<method> <path>`) in the action-name shape: words of camelCase split
 * (`listPets` → `list_pets`, `getHTTPStatus` → `get_http_status`), lower-cased, every run of
 * anything else one `_` (`issues/create` → `issues_create`, `repos/get-content` →
 * `repos_get_content`), cut to ACTION_NAME_MAX at a word's end where it can be. Empty (an id of
 * only punctuation or non-ASCII letters) when nothing is left.
 */
export function normalizedName(source: string, max = ACTION_NAME_MAX): string {
  const words = source
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (words.length <= max) return words;
  const cut = words.slice(0, max);
  const atWord = cut.lastIndexOf('_');
  return (atWord > max / 2 ? cut.slice(0, atWord) : cut).replace(/_+$/, '');
}

/** The name of an operation without a usable operationId: its method and path. */
export function fallbackName(method: string, path: string): string {
  return normalizedName(`${method} ${path.replace(/[{}]/g, ' ')}`) || method.toLowerCase();
}

export interface NamedOperation {
  /** Where it is: sorted by path, then by method, names are handed out. */
  path: string;
  method: string;
  operationId: string | null;
}

/** Two or more operations whose names came out alike: the first keeps it, the others `_2`, `_3`, … */
export interface NameCollision {
  name: string;
  operations: { method: string; path: string; operationId: string | null; name: string }[];
}

const METHOD_ORDER = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'POST', 'PUT', 'PATCH', 'DELETE'];

function methodRank(method: string): number {
  const rank = METHOD_ORDER.indexOf(method.toUpperCase());
  return rank < 0 ? METHOD_ORDER.length : rank;
}

/**
 * A unique action name for each operation, in the order given. Names are handed out in the
 * order of path, then method (GET, HEAD, OPTIONS, TRACE, POST, PUT, PATCH, DELETE), so they do
 * not depend on the order the document lists things in: the first of two operations whose names
 * come out alike keeps it, the next is `<name>_2` (cut to fit), and so on, and each collision is
 * reported.
 */
export function assignNames<T extends NamedOperation>(
  operations: readonly T[],
): { names: Map<T, string>; collisions: NameCollision[] } {
  const sorted = [...operations].sort((a, b) =>
    a.path === b.path ? methodRank(a.method) - methodRank(b.method) : a.path < b.path ? -1 : 1,
  );
  const wanted = new Map<T, string>();
  for (const operation of sorted) {
    const fromId = operation.operationId === null ? '' : normalizedName(operation.operationId);
    wanted.set(operation, fromId || fallbackName(operation.method, operation.path));
  }
  // Every wanted name is reserved first, so a `_2` never takes a name an operation has by right.
  const taken = new Set(wanted.values());
  const holders = new Map<string, T[]>();
  const names = new Map<T, string>();
  for (const operation of sorted) {
    const base = wanted.get(operation) ?? '';
    const holding = holders.get(base);
    if (!holding) {
      holders.set(base, [operation]);
      names.set(operation, base);
      continue;
    }
    holding.push(operation);
    let name = base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${String(n)}`;
      name = `${normalizedName(base, ACTION_NAME_MAX - suffix.length)}${suffix}`;
    }
    taken.add(name);
    names.set(operation, name);
  }
  const collisions = [...holders]
    .filter(([, holding]) => holding.length > 1)
    .map(([name, holding]) => ({
      name,
      operations: holding.map((operation) => ({
        method: operation.method,
        path: operation.path,
        operationId: operation.operationId,
        name: names.get(operation) ?? name,
      })),
    }));
  return { names, collisions };
}
