/** What Postgres's lexer takes for whitespace (not every character `\s` matches). */
const SPACE = /[ \t\n\r\f\v]/;

/**
 * What Postgres runs of a migration's text, for comparing two texts: its `--` comments dropped
 * and each run of whitespace between tokens made one space (or one line break, where the run
 * held one: two string constants are one only across a line break). Everything quoted is kept
 * byte for byte: string constants, quoted identifiers, dollar-quoted bodies (a function's body
 * is stored as written, its comments included) and block comments, so a change in any of them
 * is a change here.
 */
export function withoutLineComments(text: string): string {
  let out = '';
  let i = 0;
  const whitespace = (start: number) => {
    let end = start;
    let lineBreak = false;
    for (;;) {
      if (end < text.length && SPACE.test(text[end] ?? '')) {
        if (text[end] === '\n') lineBreak = true;
        end += 1;
      } else if (text.startsWith('--', end)) {
        const next = text.indexOf('\n', end);
        end = next === -1 ? text.length : next;
      } else {
        break;
      }
    }
    return { end, lineBreak };
  };
  while (i < text.length) {
    const char = text[i] ?? '';
    if (SPACE.test(char) || text.startsWith('--', i)) {
      const run = whitespace(i);
      out += run.lineBreak ? '\n' : ' ';
      i = run.end;
    } else if (text.startsWith('/*', i)) {
      const end = blockCommentEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (char === "'") {
      const escapes = /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '');
      const end = quotedEnd(text, i, "'", escapes);
      out += text.slice(i, end);
      i = end;
    } else if (char === '"') {
      const end = quotedEnd(text, i, '"', false);
      out += text.slice(i, end);
      i = end;
    } else if (char === '$' && !/[\w$]/.test(text[i - 1] ?? '')) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/.exec(text.slice(i))?.[0];
      if (tag === undefined) {
        out += char;
        i += 1;
      } else {
        const close = text.indexOf(tag, i + tag.length);
        if (close === -1) throw new Error(`unterminated ${tag} body at offset ${String(i)}`);
        const end = close + tag.length;
        out += text.slice(i, end);
        i = end;
      }
    } else {
      out += char;
      i += 1;
    }
  }
  return out.trim();
}

/** Where a quoted string or identifier opened at `start` ends (a doubled quote stays inside). */
function quotedEnd(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const char = text[i];
    if (backslashEscapes && char === '\\') {
      i += 2;
    } else if (char === quote) {
      if (text[i + 1] !== quote) return i + 1;
      i += 2;
    } else {
      i += 1;
    }
  }
  throw new Error(`unterminated ${quote} at offset ${String(start)}`);
}

/** Where a block comment opened at `start` ends; Postgres lets them nest. */
function blockCommentEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text.startsWith('/*', i)) {
      depth += 1;
      i += 2;
    } else if (text.startsWith('*/', i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else {
      i += 1;
    }
  }
  throw new Error(`unterminated block comment at offset ${String(start)}`);
}
