import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: doc paths are relative to it, as a reader sees them on GitHub. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Folders no doc lives in: installed packages, local state, the pinned binaries, git's own. */
const NOT_DOCS = new Set(['node_modules', '.data', '.tools', '.git']);

/** A markdown file as the checks read it. */
export interface Doc {
  /** Relative to the repository root, with `/`: what a failure names (`api/README.md:12`). */
  path: string;
  /** Absolute, for resolving what it links to. */
  absolute: string;
  lines: string[];
}

/** A fenced code block. */
export interface CodeBlock {
  doc: Doc;
  /** The info string's first word, lowercased (`ts`, `sh`), or '' for a bare fence. */
  lang: string;
  /** 1-based line of the opening fence. */
  fenceLine: number;
  /** 1-based line of the block's first content line. */
  firstLine: number;
  /** The content, its fence's indentation removed. */
  lines: string[];
  /**
   * The `<!-- doc-test: … -->` marker above the fence, if any: the nearest line above that is not
   * blank (prettier keeps a blank line between an HTML comment and a fence).
   */
  marker: string | null;
}

/** A `<!-- doc-test: … -->` line, wherever it is. */
export interface Marker {
  doc: Doc;
  line: number;
  kind: string;
  /** The block it marks: its fence must be the next line that is not blank. */
  block: CodeBlock | null;
}

/** `README.md:12`: how every check names a place in the docs. */
export function where(doc: Doc, line: number): string {
  return `${doc.path}:${String(line)}`;
}

/** The marker kinds the doc tests know; any other is a typo that would silently mark nothing. */
export const MARKER_KINDS = ['fragment', 'walkthrough'] as const;

const MARKER = /^\s*<!--\s*doc-test:\s*([\w-]+)\s*-->\s*$/;
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;

export function readDoc(relative: string, root = REPO_ROOT): Doc {
  const absolute = path.join(root, relative);
  const text = readFileSync(absolute, 'utf8');
  return { path: relative.split(path.sep).join('/'), absolute, lines: text.split(/\r?\n/) };
}

/**
 * The docs: README.md at the top, and every README.md in the top-level folders and their
 * subfolders, in a stable order (the top README first).
 */
export function findDocs(root = REPO_ROOT): Doc[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      if (NOT_DOCS.has(entry.name)) continue;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else if (relative && entry.isFile() && entry.name === 'README.md') found.push(child);
    }
  };
  walk('');
  found.sort();
  return ['README.md', ...found].map((relative) => readDoc(relative, root));
}

/** Fenced code blocks, per CommonMark: a closing fence of the same character, at least as long. */
export function codeBlocks(doc: Doc): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < doc.lines.length; index += 1) {
    const open = FENCE_OPEN.exec(doc.lines[index] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const content: string[] = [];
    let end = index + 1;
    for (; end < doc.lines.length; end += 1) {
      const line = doc.lines[end] ?? '';
      const trimmed = line.trim();
      if (trimmed.startsWith(fence) && /^(`+|~+)$/.test(trimmed) && trimmed[0] === fence[0]) {
        break;
      }
      content.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    let previous = index - 1;
    while (previous >= 0 && (doc.lines[previous] ?? '').trim() === '') previous -= 1;
    const above = previous >= 0 ? MARKER.exec(doc.lines[previous] ?? '') : null;
    blocks.push({
      doc,
      lang: info.toLowerCase(),
      fenceLine: index + 1,
      firstLine: index + 2,
      lines: content,
      marker: above?.[1] ?? null,
    });
    index = end;
  }
  return blocks;
}

/** Whether a 0-based line index is inside a fenced block (fences included). */
export function fencedLines(doc: Doc): Set<number> {
  const inside = new Set<number>();
  for (const block of codeBlocks(doc)) {
    const last = block.firstLine - 1 + block.lines.length;
    for (let line = block.fenceLine - 1; line <= last; line += 1) inside.add(line);
  }
  return inside;
}

/** A run of prose lines (no blank line, no code block), as markdown reads a paragraph. */
export interface Paragraph {
  text: string;
  firstLine: number;
}

/**
 * The doc's prose, paragraph by paragraph: a link's text or a code span may wrap onto the next
 * line, so they are read from whole paragraphs, not line by line.
 */
export function paragraphs(doc: Doc): Paragraph[] {
  const fenced = fencedLines(doc);
  const found: Paragraph[] = [];
  let current: Paragraph | null = null;
  doc.lines.forEach((line, index) => {
    if (fenced.has(index) || line.trim() === '') {
      current = null;
      return;
    }
    if (current) {
      current.text += `\n${line}`;
    } else {
      current = { text: line, firstLine: index + 1 };
      found.push(current);
    }
  });
  return found;
}

/** The doc line of a character of a paragraph. */
export function lineAt(paragraph: Paragraph, offset: number): number {
  return paragraph.firstLine + (paragraph.text.slice(0, offset).match(/\n/g)?.length ?? 0);
}

/** Inline code spans (`` `x` ``, ``` `` x `` ```), which may go over a line break. */
export const CODE_SPAN = /(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)/g;

/** The text with its code spans blanked out (line breaks kept): what is prose and not code. */
export function withoutCodeSpans(text: string): string {
  return text.replace(CODE_SPAN, (span) => span.replace(/[^\n]/g, ' '));
}

/** Every `<!-- doc-test: … -->` line outside code blocks, with the block it marks. */
export function markers(doc: Doc): Marker[] {
  const blocks = new Map(codeBlocks(doc).map((block) => [block.fenceLine, block]));
  const fenced = fencedLines(doc);
  const found: Marker[] = [];
  doc.lines.forEach((line, index) => {
    const match = MARKER.exec(line);
    if (!match?.[1] || fenced.has(index)) return;
    let next = index + 1;
    while (next < doc.lines.length && (doc.lines[next] ?? '').trim() === '') next += 1;
    found.push({ doc, line: index + 1, kind: match[1], block: blocks.get(next + 1) ?? null });
  });
  return found;
}

/**
 * What is wrong with the doc's markers: one that marks no block (a blank line between it and
 * the fence, or none below), or a kind the tests do not know. Either would leave a block
 * unchecked without a word.
 */
export function markerProblems(doc: Doc): string[] {
  return markers(doc).flatMap((marker) => {
    const problems: string[] = [];
    const at = where(doc, marker.line);
    if (!(MARKER_KINDS as readonly string[]).includes(marker.kind)) {
      problems.push(
        `${at}: unknown marker "doc-test: ${marker.kind}" (known: ${MARKER_KINDS.join(', ')})`,
      );
    }
    if (!marker.block) {
      problems.push(`${at}: the marker is not right above a code block's opening fence`);
    } else if (marker.kind === 'fragment' && !isTypeScript(marker.block)) {
      problems.push(
        `${at}: "doc-test: fragment" marks a TypeScript block, not a ${marker.block.lang || 'bare'} one`,
      );
    } else if (marker.kind === 'walkthrough' && !isShell(marker.block)) {
      problems.push(
        `${at}: "doc-test: walkthrough" marks a shell block (sh, bash), not a ${marker.block.lang || 'bare'} one`,
      );
    } else if (marker.kind === 'walkthrough' && doc.path !== 'README.md') {
      problems.push(
        `${at}: the walkthrough is README.md's; this block of ${doc.path} would never run`,
      );
    }
    return problems;
  });
}

/** TypeScript blocks, the ones the compile check reads. */
export function isTypeScript(block: CodeBlock): boolean {
  return block.lang === 'ts' || block.lang === 'typescript';
}

/** Shell blocks, the ones a walkthrough is written in. */
export function isShell(block: CodeBlock): boolean {
  return ['sh', 'bash', 'shell', 'console', 'zsh'].includes(block.lang);
}
