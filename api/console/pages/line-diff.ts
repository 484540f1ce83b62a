import { html, type Html } from '../../connect/pages/html.js';

/** One line of one side of a comparison: kept, or only on this side. */
export interface DiffLine {
  text: string;
  kind: 'same' | 'removed' | 'added';
}

/**
 * Past this many cells the middle of two texts is not aligned line by line: it is shown as
 * replaced whole. A tool's definition is at most 64 KiB, so this bounds what one page costs
 * (the table of the longest common subsequence) whatever a server lists.
 */
const MAX_CELLS = 1_000_000;

/**
 * The lines of `before` and `after`, each marked as kept or as only on its side: the longest
 * common subsequence of lines, after the common head and tail are set aside (most edits of a
 * schema or a policy touch a few lines in the middle).
 */
export function lineDiff(before: string, after: string): { before: DiffLine[]; after: DiffLine[] } {
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail += 1;
  }
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const same = (text: string): DiffLine => ({ text, kind: 'same' });
  const left: DiffLine[] = a.slice(0, head).map(same);
  const right: DiffLine[] = b.slice(0, head).map(same);
  const kept = (midA.length + 1) * (midB.length + 1) <= MAX_CELLS ? commonLines(midA, midB) : null;
  if (kept === null) {
    left.push(...midA.map((text): DiffLine => ({ text, kind: 'removed' })));
    right.push(...midB.map((text): DiffLine => ({ text, kind: 'added' })));
  } else {
    midA.forEach((text, i) => left.push({ text, kind: kept.a.has(i) ? 'same' : 'removed' }));
    midB.forEach((text, j) => right.push({ text, kind: kept.b.has(j) ? 'same' : 'added' }));
  }
  left.push(...a.slice(a.length - tail).map(same));
  right.push(...b.slice(b.length - tail).map(same));
  return { before: left, after: right };
}

/** Which lines of each side the longest common subsequence keeps, by index. */
function commonLines(
  a: readonly string[],
  b: readonly string[],
): { a: Set<number>; b: Set<number> } {
  const width = b.length + 1;
  // lengths[i * width + j]: the LCS of a[i..] and b[j..]; 32 bits, as a side may pass 65,535.
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  const keptA = new Set<number>();
  const keptB = new Set<number>();
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      keptA.add(i);
      keptB.add(j);
      i += 1;
      j += 1;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0)) {
      i += 1;
    } else {
      j += 1;
    }
  }
  return { a: keptA, b: keptB };
}

/**
 * One side of a comparison as a `pre`: each line after a sign column (`−` only before, `+` only
 * after, blank kept), inside `del`/`ins` where it differs, so the difference reads without
 * colour too.
 */
export function renderDiffSide(lines: readonly DiffLine[], label: string): Html {
  const row = (line: DiffLine): Html => {
    const text = `${SIGNS[line.kind]}${line.text}`;
    if (line.kind === 'removed') return html`<del>${text}</del>`;
    if (line.kind === 'added') return html`<ins>${text}</ins>`;
    return html`<span>${text}</span>`;
  };
  return html`<pre class="diff" aria-label="${label}">${lines.map(row)}</pre>`;
}

const SIGNS: Record<DiffLine['kind'], string> = { removed: '− ', added: '+ ', same: '  ' };

/** JSON as people read it: two-space indentation, keys in the order they were written. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
