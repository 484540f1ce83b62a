import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Argument, Command, Option } from 'commander';
import {
  codeBlocks,
  CODE_SPAN,
  lineAt,
  paragraphs,
  REPO_ROOT,
  where,
  type CodeBlock,
  type Doc,
} from './doc-blocks.js';
import { commandWords, shellSegments, type Word } from './shell-words.js';

/** Blocks whose lines are code of another language, never shell commands. */
const NOT_SHELL = new Set(['ts', 'typescript', 'js', 'javascript', 'json', 'jsonc', 'html']);

/** A command line of the docs that runs the `gatehouse` command, or an npm script. */
export interface CommandLine {
  doc: Doc;
  line: number;
  /** `gatehouse`: `args` go to the CLI; `npm`: `script` must exist, `args` follow its `--`. */
  kind: 'gatehouse' | 'npm';
  script?: string;
  args: Word[];
  /** Inline code in prose (`` `gatehouse keys create --env <name>` ``), not a code block. */
  inline: boolean;
}

/** What checking a command line found, and which CLI command it names. */
export interface CommandCheck {
  line: CommandLine;
  failures: string[];
  /** The command it reaches, e.g. `gatehouse keys create`, when it names one. */
  command: string | null;
}

/** The CLI's ways in, as a reader types them: `gatehouse`, `npx gatehouse`, `node infra/cli/bin.js`. */
function gatehouseArgs(words: Word[]): Word[] | null {
  const [first, second] = words;
  if (!first) return null;
  if (first.text === 'gatehouse') return words.slice(1);
  if (first.text === 'npx') {
    const rest = words.slice(1);
    const name = rest.findIndex((word) => !word.text.startsWith('-'));
    return rest[name]?.text === 'gatehouse' ? rest.slice(name + 1) : null;
  }
  const bin = (text: string) => /^(\.\/)?infra\/cli\/bin\.js$/.test(text);
  if (first.text === 'node' && second && bin(second.text)) return words.slice(2);
  if (bin(first.text)) return words.slice(1);
  return null;
}

/** npm's aliases of `run`, and the scripts it runs by their own verb (`npm test`). */
const NPM_RUN = new Set(['run', 'run-script', 'rum', 'urn']);
const NPM_SCRIPT_VERBS: Record<string, string> = {
  test: 'test',
  t: 'test',
  tst: 'test',
  start: 'start',
  stop: 'stop',
  restart: 'restart',
};

/** The command lines of one shell text (a block, an inline code span). */
function linesOf(doc: Doc, text: string, firstLine: number, inline: boolean): CommandLine[] {
  const found: CommandLine[] = [];
  for (const segment of shellSegments(text, firstLine)) {
    const words = commandWords(segment);
    const first = words[0];
    if (!first) continue;
    const args = gatehouseArgs(words);
    if (args) {
      found.push({ doc, line: first.line, kind: 'gatehouse', args, inline });
      continue;
    }
    if (first.text !== 'npm') continue;
    const rest = words.slice(1).filter((word) => !word.text.startsWith('-') || word.text === '--');
    const verb = rest[0]?.text ?? '';
    let script: string | undefined;
    let after: Word[] = [];
    if (NPM_RUN.has(verb)) {
      script = rest[1]?.text;
      after = words.slice(words.indexOf(rest[1] ?? first) + 1);
    } else if (NPM_SCRIPT_VERBS[verb]) {
      script = NPM_SCRIPT_VERBS[verb];
      after = words.slice(words.indexOf(rest[0] ?? first) + 1);
    }
    // `npm run` alone lists the scripts: nothing to check.
    if (script === undefined) continue;
    const dashes = after.findIndex((word) => word.text === '--');
    found.push({
      doc,
      line: first.line,
      kind: 'npm',
      script,
      args: dashes === -1 ? [] : after.slice(dashes + 1),
      inline,
    });
  }
  return found;
}

/** Inline code spans of the prose, with the line each starts on: `` `npx gatehouse env` ``. */
function inlineCode(doc: Doc): { text: string; line: number }[] {
  return paragraphs(doc).flatMap((paragraph) =>
    [...paragraph.text.matchAll(CODE_SPAN)].map((match) => ({
      // A line break in a code span is a space.
      text: (match[2] ?? '').replace(/\n/g, ' ').trim(),
      line: lineAt(paragraph, match.index),
    })),
  );
}

/**
 * Every command line of a doc that the CLI check reads: in its code blocks (all but those of
 * another language: TypeScript, JSON, …), and in inline code that starts with the command
 * (`` `gatehouse apps show <app> --env <name>` ``, as a CLI reference lists them).
 */
export function commandLines(doc: Doc, blocks: CodeBlock[] = codeBlocks(doc)): CommandLine[] {
  const inBlocks = blocks
    .filter((block) => !NOT_SHELL.has(block.lang))
    .flatMap((block) => linesOf(doc, block.lines.join('\n'), block.firstLine, false));
  const inProse = inlineCode(doc)
    .filter(({ text }) =>
      /^(npx\s+(-\S+\s+)*)?gatehouse\s|^npm\s|^node\s+(\.\/)?infra\/cli\/bin\.js/.test(text),
    )
    .flatMap(({ text, line }) => linesOf(doc, text, line, true));
  return [...inBlocks, ...inProse].sort((a, b) => a.line - b.line);
}

/** package.json's scripts: what `npm run <name>` may name. */
export function packageScripts(root = REPO_ROOT): Record<string, string> {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  return manifest.scripts ?? {};
}

const HELP = new Set(['-h', '--help']);

/** A word that stands for something the reader fills in: `<name>`, `…`. */
function placeholder(text: string): boolean {
  return /^<[^>]*>$/.test(text) || text === '…' || text === '...';
}

function optionNames(command: Command): string {
  return command.options
    .map((option) => option.long ?? option.short ?? '')
    .filter(Boolean)
    .join(', ');
}

function commandPath(names: string[]): string {
  return names.join(' ');
}

/**
 * Walks the CLI's definition along `args` as commander parses them: each word names a
 * subcommand while the command has some, every `--flag` must be an option of the command it is
 * given to (or help), a flag's value is read with it (and checked by the option's own parser or
 * choices when the doc writes a literal value), and, in a code block, a command that has
 * required options must be given them.
 */
export function checkArgs(
  program: Command,
  args: readonly Word[],
  options: { inline: boolean },
): { failures: string[]; command: Command | null; names: string[] } {
  const failures: string[] = [];
  let command = program;
  const names = [program.name()];
  let positional = 0;
  let help = false;
  const given = new Set<Option>();
  // A CLI reference brackets what may be left out: `[--env <name>]`.
  const unbracket = (text: string) => text.replace(/^\[+|\]+$/g, '');
  for (let index = 0; index < args.length; index += 1) {
    const text = unbracket(args[index]?.text ?? '');
    if (text === '--') break;
    if (/^--?[A-Za-z]/.test(text)) {
      const equals = text.indexOf('=');
      const flag = equals === -1 ? text : text.slice(0, equals);
      if (HELP.has(flag)) {
        help = true;
        continue;
      }
      const option = command.options.find((known) => known.long === flag || known.short === flag);
      if (!option) {
        failures.push(
          `unknown option ${flag} of "${commandPath(names)}" (its options: ${optionNames(command) || 'none'})`,
        );
        continue;
      }
      given.add(option);
      if (!option.required && !option.optional) continue;
      let value: string | undefined = equals === -1 ? undefined : text.slice(equals + 1);
      if (value === undefined) {
        const next = args[index + 1]?.text;
        if (next !== undefined && (option.required || !next.startsWith('-'))) {
          value = unbracket(next);
          index += 1;
        }
      }
      if (value === undefined) {
        if (option.required && !options.inline) failures.push(`${flag} needs a value`);
        continue;
      }
      const problem = literalValueProblem(option, value);
      if (problem) failures.push(`${flag} ${value}: ${problem}`);
      continue;
    }
    if (placeholder(text)) {
      // `gatehouse <command> --help`: a command the reader chooses; nothing more to check.
      if (command.commands.length > 0 && positional === 0)
        return { failures, command: null, names };
      positional += 1;
      continue;
    }
    if (command.commands.length > 0 && positional === 0) {
      const sub = command.commands.find(
        (candidate) => candidate.name() === text || candidate.aliases().includes(text),
      );
      if (sub) {
        command = sub;
        names.push(sub.name());
        continue;
      }
      if (text === 'help') return { failures, command: null, names };
      if (command.registeredArguments.length === 0) {
        failures.push(
          `unknown command "${commandPath([...names, text])}" (the commands of "${commandPath(names)}": ${command.commands.map((sub) => sub.name()).join(', ')})`,
        );
        return { failures, command: null, names };
      }
    }
    const argument = command.registeredArguments[positional];
    const problem = argument ? literalValueProblem(argument, text) : null;
    if (problem) failures.push(`<${argument?.name() ?? ''}> ${text}: ${problem}`);
    positional += 1;
  }
  if (!help && !options.inline) {
    if (command.commands.length > 0 && command !== program) {
      failures.push(
        `"${commandPath(names)}" is a group, not a command: name one of ${command.commands.map((sub) => sub.name()).join(', ')}`,
      );
    }
    for (const option of command.options) {
      if (option.mandatory && option.defaultValue === undefined && !given.has(option)) {
        failures.push(`"${commandPath(names)}" requires ${option.flags}`);
      }
    }
  }
  return { failures, command, names };
}

/**
 * A value the doc writes out (not `$VAR`, not `<name>`) that the option or argument would
 * refuse: its choices, or its parser (`--access superuser`, `envs create Production`).
 */
function literalValueProblem(option: Option | Argument, value: string): string | null {
  if (/[$<>…]/.test(value)) return null;
  if (option.argChoices && !option.argChoices.includes(value)) {
    return `not one of ${option.argChoices.join(', ')}`;
  }
  if (!option.parseArg) return null;
  try {
    option.parseArg(value, undefined);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The script's own `gatehouse` command, when the script is one: `node infra/cli/bin.js dev`. */
function scriptCommand(body: string): Word[] | null {
  const segments = shellSegments(body);
  if (segments.length !== 1 || !segments[0]) return null;
  return gatehouseArgs(commandWords(segments[0]));
}

/** Checks one command line against the CLI's definition and package.json's scripts. */
export function checkCommandLine(
  program: Command,
  scripts: Record<string, string>,
  line: CommandLine,
): CommandCheck {
  const at = `${where(line.doc, line.line)}${line.inline ? ' (inline code)' : ''}`;
  if (line.kind === 'npm') {
    const script = line.script ?? '';
    const body = scripts[script];
    if (body === undefined) {
      return {
        line,
        failures: [
          `${at}: npm run ${script}: no script "${script}" in package.json (its scripts: ${Object.keys(scripts).join(', ')})`,
        ],
        command: null,
      };
    }
    const own = scriptCommand(body);
    if (!own || line.args.length === 0) return { line, failures: [], command: null };
    const checked = checkArgs(program, [...own, ...line.args], { inline: line.inline });
    return {
      line,
      failures: checked.failures.map((failure) => `${at}: npm run ${script} -- …: ${failure}`),
      command: null,
    };
  }
  const checked = checkArgs(program, line.args, { inline: line.inline });
  const shown = ['gatehouse', ...line.args.map((word) => word.text)].join(' ');
  return {
    line,
    failures: checked.failures.map((failure) => `${at}: ${shown}: ${failure}`),
    command:
      checked.command && checked.command.commands.length === 0 ? commandPath(checked.names) : null,
  };
}

/** Every command of the CLI that has no subcommands: `gatehouse dev`, `gatehouse keys create`. */
export function cliLeaves(program: Command): string[] {
  const leaves: string[] = [];
  const walk = (command: Command, names: string[]) => {
    for (const sub of command.commands) {
      const path = [...names, sub.name()];
      if (sub.commands.length === 0) leaves.push(commandPath(path));
      else walk(sub, path);
    }
  };
  walk(program, [program.name()]);
  return leaves;
}
