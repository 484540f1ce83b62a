import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * A condition read as a case-insensitive app reads paths: its string literals and the call's
 * strings case-folded alike, so `request.path.startsWith("/repos/MyOrg")` holds on
 * `/repos/myorg/x` as it does on `/repos/MyOrg/x`. This is one more reading a condition is judged
 * on (conditions.ts), never the only one: where it disagrees with the call as sent, the stricter
 * outcome applies, so a reading that misjudges a condition can only make a decision stricter.
 */

/** Case folded as case-insensitive matching does it: `ſ` is `s`, the Kelvin sign `k`. */
export function caseFolded(text: string): string {
  return text.toUpperCase().toLowerCase();
}

/**
 * A regular expression with its letters folded, escapes left alone: `^/Tasks/\D` becomes
 * `^/tasks/\D`, not `^/tasks/\d`.
 */
function caseFoldedPattern(pattern: string): string {
  return pattern.replace(/\\.|[^\\]+/gsu, (part) =>
    part.startsWith('\\') ? part : caseFolded(part),
  );
}

function isNode(value: unknown): value is ASTNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'args' in value;
}

/** The string literals of `node` and where they are, with whether each is a pattern. */
function stringLiterals(
  node: ASTNode,
  found: { start: number; end: number; value: string; pattern: boolean }[],
  pattern = false,
): void {
  if (node.op === 'value') {
    if (typeof node.args === 'string') {
      found.push({ start: node.start, end: node.end, value: node.args, pattern });
    }
    return;
  }
  const visit = (value: unknown, asPattern: boolean): void => {
    if (isNode(value)) stringLiterals(value, found, asPattern);
    else if (Array.isArray(value)) {
      for (const item of value) visit(item, asPattern);
    }
  };
  // `s.matches(re)` is ['matches', s, [re]]: `re` is a pattern.
  if (node.op === 'rcall') {
    const [name, receiver, args] = node.args;
    visit(receiver, false);
    visit(args, name === 'matches');
    return;
  }
  visit(node.args, pattern);
}

/**
 * The text of a condition with its string literals case-folded, or null where it has none to
 * fold. Literals are rewritten where the parser found them, as JSON strings, which CEL reads.
 */
export function caseFoldedExpression(expression: string, ast: ASTNode): string | null {
  const found: { start: number; end: number; value: string; pattern: boolean }[] = [];
  stringLiterals(ast, found);
  let text = expression;
  let changed = false;
  for (const literal of found.sort((a, b) => b.start - a.start)) {
    const folded = literal.pattern ? caseFoldedPattern(literal.value) : caseFolded(literal.value);
    if (folded === literal.value) continue;
    text = `${text.slice(0, literal.start)}${JSON.stringify(folded)}${text.slice(literal.end)}`;
    changed = true;
  }
  return changed ? text : null;
}

/** `value` with every string in it case-folded; map keys are names, and are left as they are. */
export function caseFoldedValues(value: unknown): unknown {
  if (typeof value === 'string') return caseFolded(value);
  if (Array.isArray(value)) return value.map(caseFoldedValues);
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, caseFoldedValues(item)]),
    );
  }
  return value;
}
