/** A word of a shell command, its quotes removed, and the doc line it starts on. */
export interface Word {
  text: string;
  line: number;
}

/** What one simple command of a script reads as: its words, in order. */
export type Segment = Word[];

/** One command being read: its words so far, and the word being read. */
class CommandReader {
  words: Word[] = [];
  word: Word | null = null;
  /** The word after a redirection (`> file`) is its target, not an argument. */
  dropNextWord = false;
  /** The word after `<<` is a here-document's delimiter. */
  heredocNext: { stripTabs: boolean } | null = null;
}

/**
 * Splits shell text into simple commands, as far as the docs checks need: quotes and escapes are
 * removed, and every place a new command starts ends the one before (a newline, `;`, `&&`, `||`,
 * `|`, `&`, a subshell's parentheses), including inside a command substitution, which is a
 * command of its own even within double quotes (`eval "$(npx gatehouse env)"`). Comments,
 * redirections and here-documents are dropped. Not a shell: nothing is expanded (`$VAR` stays
 * as written).
 */
export function shellSegments(text: string, firstLine = 1): Segment[] {
  return new ShellSplitter(text, firstLine).split();
}

class ShellSplitter {
  private readonly segments: Segment[] = [];
  private index = 0;
  private line: number;
  /** Here-documents whose bodies start after the current line. */
  private readonly pendingHeredocs: { delimiter: string; stripTabs: boolean }[] = [];

  constructor(
    private readonly text: string,
    firstLine: number,
  ) {
    this.line = firstLine;
  }

  split(): Segment[] {
    this.readCommands(null);
    return this.segments;
  }

  private peek(offset = 0): string {
    return this.text[this.index + offset] ?? '';
  }

  private append(reader: CommandReader, chars: string): void {
    reader.word ??= { text: '', line: this.line };
    reader.word.text += chars;
  }

  private endWord(reader: CommandReader): void {
    const { word } = reader;
    if (word === null) return;
    if (reader.heredocNext) {
      this.pendingHeredocs.push({ delimiter: word.text, stripTabs: reader.heredocNext.stripTabs });
      reader.heredocNext = null;
    } else if (reader.dropNextWord) {
      reader.dropNextWord = false;
    } else {
      reader.words.push(word);
    }
    reader.word = null;
  }

  private endCommand(reader: CommandReader): void {
    this.endWord(reader);
    if (reader.words.length > 0) this.segments.push(reader.words);
    reader.words = [];
  }

  /** Skips the bodies of here-documents once the line that introduced them has ended. */
  private skipHeredocBodies(): void {
    for (const heredoc of this.pendingHeredocs.splice(0)) {
      while (this.index < this.text.length) {
        const end = this.text.indexOf('\n', this.index);
        const body = this.text.slice(this.index, end === -1 ? this.text.length : end);
        this.index = end === -1 ? this.text.length : end + 1;
        this.line += 1;
        if ((heredoc.stripTabs ? body.replace(/^\t+/, '') : body) === heredoc.delimiter) break;
      }
    }
  }

  /** `$(…)` or a backtick command: its commands are segments; in the word, a stand-in. */
  private substitution(reader: CommandReader, closing: string): void {
    const startLine = this.line;
    this.readCommands(closing);
    reader.word ??= { text: '', line: startLine };
    reader.word.text += '$(…)';
  }

  /** Reads a `$(…)` or a backtick substitution starting here; false when none starts here. */
  private substitutionStart(reader: CommandReader): boolean {
    if (this.peek() === '$' && this.peek(1) === '(') {
      this.index += 2;
      this.substitution(reader, ')');
      return true;
    }
    if (this.peek() === '`') {
      this.index += 1;
      this.substitution(reader, '`');
      return true;
    }
    return false;
  }

  private singleQuoted(reader: CommandReader): void {
    this.index += 1;
    this.append(reader, '');
    while (this.index < this.text.length && this.peek() !== "'") {
      if (this.peek() === '\n') this.line += 1;
      this.append(reader, this.peek());
      this.index += 1;
    }
    this.index += 1;
  }

  private doubleQuoted(reader: CommandReader): void {
    this.index += 1;
    this.append(reader, '');
    while (this.index < this.text.length && this.peek() !== '"') {
      const char = this.peek();
      if (char === '\\' && '"\\$`\n'.includes(this.peek(1))) {
        if (this.peek(1) === '\n') this.line += 1;
        else this.append(reader, this.peek(1));
        this.index += 2;
      } else if (this.substitutionStart(reader)) {
        // read by substitutionStart
      } else {
        if (char === '\n') this.line += 1;
        this.append(reader, char);
        this.index += 1;
      }
    }
    this.index += 1;
  }

  private redirection(reader: CommandReader, char: string): void {
    // A file descriptor written before the operator (`2>`) is part of it, not a word.
    if (reader.word && /^\d+$/.test(reader.word.text)) reader.word = null;
    this.endWord(reader);
    if (char === '<' && this.peek(1) === '<' && this.peek(2) !== '<') {
      this.index += 2;
      const stripTabs = this.peek() === '-';
      if (stripTabs) this.index += 1;
      reader.heredocNext = { stripTabs };
      return;
    }
    this.index += 1;
    while (['>', '<', '|'].includes(this.peek())) this.index += 1;
    if (this.peek() === '&') {
      this.index += 1;
      while (/[\d-]/.test(this.peek())) this.index += 1;
    } else {
      reader.dropNextWord = true;
    }
  }

  /** Reads commands until `closer` (the `)` of `$(`, a backtick) or the end of the text. */
  private readCommands(closer: string | null): void {
    const reader = new CommandReader();
    while (this.index < this.text.length) {
      const char = this.peek();
      if (closer !== null && char === closer) {
        this.index += 1;
        this.endCommand(reader);
        return;
      }
      if (char === '\\') {
        if (this.peek(1) === '\n') this.line += 1;
        else this.append(reader, this.peek(1));
        this.index += 2;
      } else if (char === '\n') {
        this.index += 1;
        this.line += 1;
        this.endCommand(reader);
        this.skipHeredocBodies();
      } else if (char === ' ' || char === '\t') {
        this.index += 1;
        this.endWord(reader);
      } else if (char === '#' && reader.word === null) {
        while (this.index < this.text.length && this.peek() !== '\n') this.index += 1;
      } else if (char === "'") {
        this.singleQuoted(reader);
      } else if (char === '"') {
        this.doubleQuoted(reader);
      } else if (this.substitutionStart(reader)) {
        // read by substitutionStart
      } else if (char === '<' || char === '>') {
        this.redirection(reader, char);
      } else if (char === '&' && this.peek(1) === '>') {
        // `&>file`: both outputs to a file, not the end of a command.
        this.redirection(reader, '>');
      } else if (';&|()'.includes(char)) {
        this.index += 1;
        while (this.peek() === char) this.index += 1;
        this.endCommand(reader);
      } else {
        this.append(reader, char);
        this.index += 1;
      }
    }
    this.endCommand(reader);
  }
}

/** Words a command may start with that are not its name: prompts, grouping, assignments. */
const PREFIX = new Set(['$', '>', '{', '}', '!', 'then', 'do', 'else', 'elif', 'if', 'while']);
const RUNNERS = new Set(['time', 'exec', 'command', 'sudo', 'nohup']);

/** A command's words from its name on: a leading prompt, `VAR=value` or `exec` removed. */
export function commandWords(segment: Segment): Word[] {
  let start = 0;
  while (start < segment.length) {
    const text = segment[start]?.text ?? '';
    if (PREFIX.has(text) || RUNNERS.has(text) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(text)) {
      start += 1;
    } else {
      break;
    }
  }
  return segment.slice(start);
}
