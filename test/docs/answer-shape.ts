/**
 * The JSON shapes a walkthrough shows as a command's answer: JSON, where `"…"` (or a bare `…`)
 * as a value stands for any value, `…` inside a string for any text, and a bare `…` as the last
 * member of an object or array for "and more members". Without it an object's members are
 * exactly those shown (in any order), an array's elements exactly those shown (in order); with
 * it, the shown members must be there, and the shown elements appear in that order among others.
 */
export type Shape =
  | { kind: 'any' }
  | { kind: 'literal'; value: number | boolean | null }
  | { kind: 'string'; pattern: string }
  | { kind: 'object'; members: [string, Shape][]; more: boolean }
  | { kind: 'array'; items: Shape[]; more: boolean };

const ELLIPSIS = '…';

export class ShapeSyntaxError extends Error {}

/** Parses a shape; it must be one value, with nothing but whitespace around it. */
export function parseShape(text: string): Shape {
  const parser = new ShapeParser(text);
  const shape = parser.value();
  parser.end();
  return shape;
}

/**
 * Where a shape that starts at the beginning of `text` ends (the index after its closing
 * bracket), or null while its brackets are still open: what lets an answer go on over several
 * comment lines and be followed by prose.
 */
export function shapeEnd(text: string): number | null {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{' || char === '[') {
      depth += 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return null;
}

class ShapeParser {
  private index = 0;

  constructor(private readonly text: string) {}

  private fail(message: string): never {
    throw new ShapeSyntaxError(
      `${message} at "${this.text.slice(this.index, this.index + 20)}" (character ${String(this.index + 1)})`,
    );
  }

  private skip(): void {
    while (/\s/.test(this.text[this.index] ?? '')) this.index += 1;
  }

  private eat(char: string): boolean {
    this.skip();
    if (this.text[this.index] === char) {
      this.index += 1;
      return true;
    }
    return false;
  }

  end(): void {
    this.skip();
    if (this.index < this.text.length) this.fail('unexpected text after the shape');
  }

  value(): Shape {
    this.skip();
    const char = this.text[this.index];
    if (char === '{') return this.object();
    if (char === '[') return this.array();
    if (char === '"') {
      const pattern = this.string();
      return pattern === ELLIPSIS ? { kind: 'any' } : { kind: 'string', pattern };
    }
    if (this.text.startsWith(ELLIPSIS, this.index)) {
      this.index += ELLIPSIS.length;
      return { kind: 'any' };
    }
    const literal = /^(true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      this.text.slice(this.index),
    );
    if (!literal?.[1]) this.fail('expected a JSON value or …');
    this.index += literal[1].length;
    return { kind: 'literal', value: JSON.parse(literal[1]) as number | boolean | null };
  }

  private string(): string {
    const start = this.index;
    this.index += 1;
    while (this.index < this.text.length && this.text[this.index] !== '"') {
      if (this.text[this.index] === '\\') this.index += 1;
      this.index += 1;
    }
    if (this.index >= this.text.length) this.fail('unterminated string');
    this.index += 1;
    try {
      return JSON.parse(this.text.slice(start, this.index)) as string;
    } catch {
      return this.fail('invalid string');
    }
  }

  /** A bare `…` where the next member or element would be: "and more", then the closer. */
  private more(closer: string): boolean {
    this.skip();
    if (!this.text.startsWith(ELLIPSIS, this.index)) return false;
    this.index += ELLIPSIS.length;
    if (!this.eat(closer)) this.fail(`a bare … must be the last member, before ${closer}`);
    return true;
  }

  private object(): Shape {
    this.index += 1;
    const members: [string, Shape][] = [];
    if (this.eat('}')) return { kind: 'object', members, more: false };
    for (;;) {
      if (this.more('}')) return { kind: 'object', members, more: true };
      this.skip();
      if (this.text[this.index] !== '"') this.fail('expected a member name');
      const name = this.string();
      if (!this.eat(':')) this.fail(`expected : after "${name}"`);
      members.push([name, this.value()]);
      if (this.eat('}')) return { kind: 'object', members, more: false };
      if (!this.eat(',')) this.fail('expected , or }');
    }
  }

  private array(): Shape {
    this.index += 1;
    const items: Shape[] = [];
    if (this.eat(']')) return { kind: 'array', items, more: false };
    for (;;) {
      if (this.more(']')) return { kind: 'array', items, more: true };
      items.push(this.value());
      if (this.eat(']')) return { kind: 'array', items, more: false };
      if (!this.eat(',')) this.fail('expected , or ]');
    }
  }
}

/** A string pattern: `…` matches any text (none included), the rest as written. */
function matchesPattern(pattern: string, value: string): boolean {
  const parts = pattern.split(ELLIPSIS).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`).test(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** How `value` differs from `shape`: one line per difference, each with its JSON path. */
export function shapeMismatches(shape: Shape, value: unknown, at = '$'): string[] {
  switch (shape.kind) {
    case 'any':
      return [];
    case 'literal':
      return value === shape.value
        ? []
        : [`${at}: expected ${describe(shape.value)}, got ${describe(value)}`];
    case 'string':
      if (typeof value !== 'string') {
        return [`${at}: expected a string like ${describe(shape.pattern)}, got ${describe(value)}`];
      }
      return matchesPattern(shape.pattern, value)
        ? []
        : [`${at}: expected ${describe(shape.pattern)}, got ${describe(value)}`];
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return [`${at}: expected an object, got ${typeOf(value)}: ${describe(value)}`];
      }
      const record = value as Record<string, unknown>;
      const problems: string[] = [];
      for (const [name, member] of shape.members) {
        if (!(name in record)) problems.push(`${at}: no member "${name}"`);
        else problems.push(...shapeMismatches(member, record[name], `${at}.${name}`));
      }
      if (!shape.more) {
        const shown = new Set(shape.members.map(([name]) => name));
        const extra = Object.keys(record).filter((name) => !shown.has(name));
        if (extra.length > 0) {
          problems.push(
            `${at}: members the doc does not show (end it with … if more are expected): ${extra.map((name) => `"${name}"`).join(', ')}`,
          );
        }
      }
      return problems;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        return [`${at}: expected an array, got ${typeOf(value)}: ${describe(value)}`];
      }
      if (!shape.more) {
        if (value.length !== shape.items.length) {
          return [
            `${at}: expected ${String(shape.items.length)} elements, got ${String(value.length)}: ${describe(value)}`,
          ];
        }
        return shape.items.flatMap((item, index) =>
          shapeMismatches(item, value[index], `${at}[${String(index)}]`),
        );
      }
      // With "and more": the shown elements, in order, each matching a later element than the
      // one before (taking the first that matches never misses an order that exists).
      let next = 0;
      for (const [index, item] of shape.items.entries()) {
        while (next < value.length && shapeMismatches(item, value[next]).length > 0) next += 1;
        if (next >= value.length) {
          const first = shapeMismatches(item, value[index], `${at}[${String(index)}]`);
          return [
            `${at}: no element matches the shown element ${String(index + 1)}${first.length ? ` (${first[0] ?? ''})` : ''}`,
          ];
        }
        next += 1;
      }
      return [];
    }
  }
}
