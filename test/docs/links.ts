import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import {
  fencedLines,
  lineAt,
  paragraphs,
  REPO_ROOT,
  where,
  withoutCodeSpans,
  type Doc,
} from './doc-blocks.js';

/** A link of a doc's prose to a place in the repository. */
export interface Link {
  doc: Doc;
  line: number;
  /** As written: `api/README.md#routes`, `#run-it`. */
  target: string;
}

const INLINE_LINK =
  /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)/gm;
const HTML_LINK = /<(?:a|img)\b[^>]*?\s(?:href|src)="([^"]*)"/g;

/** A target that leaves the repository: a scheme (`https:`, `mailto:`) or `//host`. */
function external(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/** Every relative link of the doc's prose (code blocks and inline code are not links). */
export function relativeLinks(doc: Doc): Link[] {
  const links: Link[] = [];
  for (const paragraph of paragraphs(doc)) {
    const prose = withoutCodeSpans(paragraph.text);
    const targets = [
      ...prose.matchAll(INLINE_LINK),
      ...prose.matchAll(HTML_LINK),
      ...prose.matchAll(REFERENCE_DEFINITION),
    ].sort((a, b) => a.index - b.index);
    for (const match of targets) {
      const target = (match[1] ?? '').replace(/^<|>$/g, '');
      if (target === '' || external(target)) continue;
      // The line of the target itself: a link's text may begin on the line before.
      const at = match.index + match[0].lastIndexOf(match[1] ?? '');
      links.push({ doc, line: lineAt(paragraph, at), target });
    }
  }
  return links;
}

/**
 * A heading's text as GitHub renders it before making its anchor: inline code keeps its content
 * without the backticks, a link its text, an image its alt text; emphasis marks, HTML tags and
 * backslash escapes go.
 */
export function headingText(markdown: string): string {
  const parts = markdown.split(/(`+)(?!`)(.+?)(?<!`)\1(?!`)/);
  let text = '';
  // split with two capture groups: [prose, ticks, code, prose, ticks, code, …]
  for (let index = 0; index < parts.length; index += 3) {
    text += (parts[index] ?? '')
      .replace(/!?\[((?:[^[\]]|\[[^\]]*\])*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/\\([!-/:-@[-`{-~])/g, '$1')
      .replace(/(\*{1,3})(?=\S)(.+?)(?<=\S)\1/g, '$2')
      .replace(/(^|[^\w])(_{1,3})(?=\S)(.+?)(?<=\S)\2(?=[^\w]|$)/g, '$1$3');
    if (index + 2 < parts.length) text += parts[index + 2] ?? '';
  }
  return text.trim();
}

/**
 * The anchors of a markdown file's headings, by GitHub's rules (github-slugger: lowercased,
 * punctuation but `-` and `_` removed, spaces to `-`, a repeated slug numbered `-1`, `-2`, …),
 * and the ids of its HTML anchors (`<a id="…">`, `<a name="…">`).
 */
export function anchorsOf(lines: readonly string[]): Set<string> {
  const doc: Doc = { path: '', absolute: '', lines: [...lines] };
  const fenced = fencedLines(doc);
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  lines.forEach((line, index) => {
    if (fenced.has(index)) return;
    for (const match of withoutCodeSpans(line).matchAll(/<a\s[^>]*?(?:id|name)="([^"]+)"/g)) {
      if (match[1]) anchors.add(match[1]);
    }
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    const next = lines[index + 1] ?? '';
    const setext =
      !atx && line.trim() !== '' && !fenced.has(index + 1) && /^ {0,3}(=+|-+)[ \t]*$/.test(next)
        ? line
        : null;
    const heading = atx ? (atx[1] ?? '') : setext;
    if (heading === null) return;
    anchors.add(slugger.slug(headingText(heading)));
  });
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();

function anchorsOfFile(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (!anchors) {
    anchors = anchorsOf(readFileSync(file, 'utf8').split(/\r?\n/));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/**
 * Why a link does not resolve, or null: its file (or folder) must exist in the repository, and
 * its anchor must be a heading's of that markdown file, or a line (`#L12`, `#L12-L20`) of
 * another file.
 */
export function linkProblem(link: Link, root = REPO_ROOT): string | null {
  const hash = link.target.indexOf('#');
  const filePart = hash === -1 ? link.target : link.target.slice(0, hash);
  const anchor = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const fromDir = path.dirname(link.doc.absolute);
  const file = filePart
    ? path.resolve(
        filePart.startsWith('/') ? root : fromDir,
        decodeURIComponent(filePart.replace(/^\//, '')).split('?')[0] ?? '',
      )
    : link.doc.absolute;
  const at = where(link.doc, link.line);
  if (
    !path
      .relative(root, file)
      .split(path.sep)
      .every((part) => part !== '..')
  ) {
    return `${at}: ${link.target}: leaves the repository`;
  }
  if (!existsSync(file)) {
    return `${at}: ${link.target}: no such file ${path.relative(root, file) || '.'}`;
  }
  if (anchor === null) return null;
  if (statSync(file).isDirectory()) {
    return `${at}: ${link.target}: #${anchor} on a folder`;
  }
  if (!file.endsWith('.md')) {
    const lines = /^L(\d+)(?:-L(\d+))?$/.exec(anchor);
    if (!lines) return `${at}: ${link.target}: #${anchor} is not a line (#L12) of a source file`;
    const count = readFileSync(file, 'utf8').split('\n').length;
    const last = Number(lines[2] ?? lines[1]);
    return last > count ? `${at}: ${link.target}: the file has ${String(count)} lines` : null;
  }
  const anchors = anchorsOfFile(file);
  if (anchors.has(anchor)) return null;
  const near = [...anchors].filter((known) => known.includes(anchor) || anchor.includes(known));
  return `${at}: ${link.target}: no heading with anchor #${anchor} in ${path.relative(root, file)}${
    near.length
      ? ` (near: ${near
          .slice(0, 3)
          .map((known) => `#${known}`)
          .join(', ')})`
      : ''
  }`;
}
