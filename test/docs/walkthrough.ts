import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import { walkSignIn } from '../support/identity-provider.js';
import {
  parseShape,
  shapeEnd,
  shapeMismatches,
  ShapeSyntaxError,
  type Shape,
} from './answer-shape.js';
import { codeBlocks, where, type CodeBlock, type Doc } from './doc-blocks.js';

/** The answer a walkthrough shows under a command: `# 201 {"id":"…",…}`. */
export interface Answer {
  line: number;
  status: number | null;
  shape: Shape | null;
}

/**
 * A browser step: `# browser: open $CONNECT_URL and press Continue`, or a person's:
 * `# browser: as alice@example.com, open $REVIEW_URL and press Approve`.
 */
export interface BrowserAction {
  /** As written: a `$VARIABLE` (or a text with some) of the walkthrough's shell, or a URL. */
  url: string;
  /** The button or link pressed on the page opened, if any. */
  press: string | null;
  /** The email of the person who signs in at the identity provider the page sends a fresh browser to. */
  signedInAs?: string;
}

export type Step =
  | { kind: 'command'; line: number; text: string; answer: Answer | null }
  | { kind: 'browser'; line: number; action: BrowserAction }
  /** What the doc gets wrong before anything runs: reported as a failure at its line. */
  | { kind: 'problem'; line: number; message: string };

export interface WalkthroughBlock {
  block: CodeBlock;
  steps: Step[];
}

const BROWSER =
  /^browser:\s*(?:as\s+([^\s,]+@[^\s,]+),?\s+)?open\s+([^\s"'`]+)(?:\s+and\s+press\s+(.+?))?\s*\.?$/;
const ANSWER_START = /^(\d{3})(?:\s+(.*))?$|^([[{].*)$/;

/**
 * Whether bash reads `text` as whole commands: not ended inside a quote, after a `\`, in an open
 * `{ … }`, `if`, a here-document. Asked of bash itself, so a command spread over lines is one
 * command whatever its form.
 */
export function completeShell(text: string): boolean {
  // A line that ends in `\` goes on, though bash -n finds nothing wrong at the end of input.
  if (/(^|[^\\])(\\\\)*\\$/.test(text)) return false;
  const checked = spawnSync('bash', ['-n'], { input: `${text}\n`, encoding: 'utf8' });
  return !/unexpected EOF|unexpected end of file|here-document at line \d+ delimited by end-of-file/.test(
    checked.stderr,
  );
}

/** The text of a comment line: `#` and one space removed. */
function commentText(line: string): string | null {
  const match = /^\s*#\s?(.*)$/.exec(line);
  return match ? (match[1] ?? '') : null;
}

/**
 * A walkthrough block's steps, in order: each command (however many lines it spans) with the
 * answer on the comment lines right after it, and the browser steps between commands.
 */
export function walkthroughSteps(block: CodeBlock): Step[] {
  const steps: Step[] = [];
  const lines = block.lines;
  /** The command a comment line right here would answer, until a blank or prose line. */
  let answerable: Extract<Step, { kind: 'command' }> | null = null;
  for (let index = 0; index < lines.length; index += 1) {
    const raw = lines[index] ?? '';
    const docLine = block.firstLine + index;
    if (raw.trim() === '') {
      answerable = null;
      continue;
    }
    const comment = commentText(raw);
    if (comment === null) {
      let end = index;
      let text = raw;
      while (!completeShell(text) && end + 1 < lines.length) {
        end += 1;
        text += `\n${lines[end] ?? ''}`;
      }
      const command: Extract<Step, { kind: 'command' }> = {
        kind: 'command',
        line: docLine,
        text,
        answer: null,
      };
      steps.push(command);
      answerable = command;
      index = end;
      continue;
    }
    if (comment.startsWith('browser:')) {
      answerable = null;
      const browser = BROWSER.exec(comment);
      steps.push(
        browser?.[2]
          ? {
              kind: 'browser',
              line: docLine,
              action: {
                url: browser[2],
                press: browser[3] ?? null,
                ...(browser[1] ? { signedInAs: browser[1] } : {}),
              },
            }
          : {
              kind: 'problem',
              line: docLine,
              message: `unknown browser step "${comment}" (known: "browser: open $URL", "browser: open $URL and press <Label>", and either after "browser: as <email>,")`,
            },
      );
      continue;
    }
    const start = ANSWER_START.exec(comment);
    if (!start) {
      // Prose: it ends what an answer could still belong to.
      answerable = null;
      continue;
    }
    if (!answerable || answerable.answer) {
      steps.push({
        kind: 'problem',
        line: docLine,
        message: `"# ${comment}" reads as an answer, but no command is right above it`,
      });
      answerable = null;
      continue;
    }
    const status = start[1] ? Number(start[1]) : null;
    let shapeText = start[1] ? (start[2] ?? '') : (start[3] ?? '');
    let shape: Shape | null = null;
    if (/^[[{]/.test(shapeText)) {
      let end = index;
      for (;;) {
        const next = commentText(lines[end + 1] ?? '');
        if (shapeEnd(shapeText) !== null || next === null || next.startsWith('browser:')) break;
        end += 1;
        shapeText += `\n${next}`;
      }
      const closed = shapeEnd(shapeText);
      index = end;
      if (closed === null) {
        steps.push({
          kind: 'problem',
          line: docLine,
          message: "the answer's JSON shape is never closed",
        });
        answerable = null;
        continue;
      }
      try {
        // What follows the shape on its last line is prose.
        shape = parseShape(shapeText.slice(0, closed));
      } catch (error) {
        if (!(error instanceof ShapeSyntaxError)) throw error;
        steps.push({
          kind: 'problem',
          line: docLine,
          message: `the answer's JSON shape: ${error.message}`,
        });
        answerable = null;
        continue;
      }
    }
    answerable.answer = { line: docLine, status, shape };
  }
  return steps;
}

/** README.md's blocks marked `<!-- doc-test: walkthrough -->`, in document order. */
export function walkthroughBlocks(doc: Doc): WalkthroughBlock[] {
  return codeBlocks(doc)
    .filter((block) => block.marker === 'walkthrough')
    .map((block) => ({ block, steps: walkthroughSteps(block) }));
}

/** What one command printed and how it ended. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The HTTP status of the last response `curl` received while it ran, or null if none. */
  status: number | null;
}

/**
 * One bash process for the whole walkthrough, as a reader's terminal: variables and functions a
 * command defines are there for the next. Each command is sourced from a file of its own with
 * its standard input from /dev/null (a command that reads input must not eat the next one), and
 * ends with a marker carrying its exit code, on stdout and stderr.
 *
 * `curl` is a function in this shell that adds `-D <file>`: the response headers go to a file of
 * the test's, so the status is known while the command's output stays exactly what the reader
 * sees, whatever flags it uses (`-s`, `-i`, `-o`, `| node -pe …`), unless it names a `-D` of its
 * own. With several responses (redirects, several calls) the last one's status counts.
 */
export class BashSession {
  private stdout = '';
  private stderr = '';
  private readonly token = randomBytes(6).toString('hex');
  private count = 0;
  private exited: { code: number | null } | null = null;
  private wake: () => void = () => undefined;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly dir: string,
  ) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
      this.wake();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
      this.wake();
    });
    child.once('exit', (code) => {
      this.exited = { code };
      this.wake();
    });
  }

  private get headersFile(): string {
    return path.join(this.dir, 'headers');
  }

  static async start(options: { cwd: string; env: Record<string, string> }): Promise<BashSession> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-walkthrough-'));
    // Its own process group: whatever a command leaves running is ended with the session.
    const child = spawn('bash', ['--noprofile', '--norc'], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
    });
    const session = new BashSession(child, dir);
    const prelude = [
      `__doc_test_headers=${shellQuote(session.headersFile)}`,
      'curl() { command curl -D "$__doc_test_headers" "$@"; }',
    ].join('\n');
    const result = await session.run(prelude);
    if (result.code !== 0)
      throw new Error(`the walkthrough's shell did not start: ${result.stderr}`);
    return session;
  }

  /** Runs shell text in the session, as if typed, and waits for it to end. */
  async run(text: string): Promise<CommandResult> {
    if (this.exited) throw new Error(`the shell has exited (${String(this.exited.code)})`);
    this.count += 1;
    const file = path.join(this.dir, `command-${String(this.count)}.sh`);
    await writeFile(file, `${text}\n`);
    await rm(this.headersFile, { force: true });
    const done = `\u001e${this.token}-${String(this.count)}`;
    this.child.stdin.write(
      `. ${shellQuote(file)} </dev/null; printf '%s %s\\036' ${shellQuote(done)} "$?"; printf '%s\\036' ${shellQuote(done)} >&2\n`,
    );
    const outEnd = new RegExp(`${done} (\\d+)\u001e`);
    const errEnd = `${done}\u001e`;
    for (;;) {
      const out = outEnd.exec(this.stdout);
      const errAt = this.stderr.indexOf(errEnd);
      if (out && errAt !== -1) {
        const stdout = this.stdout.slice(0, out.index);
        const stderr = this.stderr.slice(0, errAt);
        this.stdout = this.stdout.slice(out.index + out[0].length);
        this.stderr = this.stderr.slice(errAt + errEnd.length);
        return { code: Number(out[1]), stdout, stderr, status: await this.lastStatus() };
      }
      // Read anew: the exit handler sets it while this waits.
      const exited = this.exitedNow();
      if (exited) {
        throw new Error(
          `the shell exited (${String(exited.code)}) during the command:\n${this.stdout}${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private exitedNow(): { code: number | null } | null {
    return this.exited;
  }

  private async lastStatus(): Promise<number | null> {
    const headers = await readFile(this.headersFile, 'utf8').catch(() => null);
    if (headers === null) return null;
    const statuses = [...headers.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)];
    const last = statuses.at(-1)?.[1];
    return last ? Number(last) : null;
  }

  /** The value of a text with `$VARIABLES` in this shell, as a command would see it. */
  async expand(text: string): Promise<string> {
    const result = await this.run(`printf '%s' "${text}"`);
    return result.stdout;
  }

  /** Ends the shell and everything it started (its process group). */
  async close(): Promise<void> {
    if (!this.exited && this.child.pid) {
      const gone = new Promise<void>((resolve) => {
        this.child.once('exit', () => {
          resolve();
        });
      });
      try {
        process.kill(-this.child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      await gone;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The defaults the docs show (a reader's ports), for the addresses this run really has. */
export interface Addresses {
  /** e.g. `{ 'http://127.0.0.1:3000': 'http://127.0.0.1:41523' }`: shown → actual. */
  [shown: string]: string;
}

/** The command's output with this run's addresses written as the docs show them. */
function asShown(output: string, addresses: Addresses): string {
  let text = output;
  // Longest first, and never inside a longer port: :4010 must not be read into :40100.
  const entries = Object.entries(addresses).sort(([, a], [, b]) => b.length - a.length);
  for (const [shown, actual] of entries) {
    const escaped = actual.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    text = text.replace(new RegExp(`${escaped}(?![0-9])`, 'g'), shown);
  }
  return text;
}

function excerpt(text: string, length = 300): string {
  const flat = text.trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}

/** Checks a command's result against the answer the doc shows; failures name the answer's line. */
export function answerFailures(
  doc: Doc,
  command: Extract<Step, { kind: 'command' }>,
  result: CommandResult,
  addresses: Addresses,
): string[] {
  const failures: string[] = [];
  const commandAt = where(doc, command.line);
  if (result.code !== 0) {
    const said = excerpt(result.stderr || result.stdout);
    failures.push(
      `${commandAt}: the command exited ${String(result.code)}${said ? `: ${said}` : ''}`,
    );
  }
  const { answer } = command;
  if (!answer) return failures;
  const at = `${where(doc, answer.line)} (the answer of ${commandAt})`;
  if (answer.status !== null) {
    if (result.status === null) {
      failures.push(
        `${at}: shows status ${String(answer.status)}, but the command made no HTTP request with curl`,
      );
    } else if (result.status !== answer.status) {
      failures.push(
        `${at}: status ${String(result.status)}, the doc shows ${String(answer.status)}; it printed: ${excerpt(result.stdout)}`,
      );
    }
  }
  if (answer.shape) {
    const printed = asShown(result.stdout, addresses).trim();
    let value: unknown;
    try {
      value = JSON.parse(printed);
    } catch {
      failures.push(
        `${at}: the doc shows JSON, the command printed: ${excerpt(printed) || '(nothing)'}`,
      );
      return failures;
    }
    for (const mismatch of shapeMismatches(answer.shape, value))
      failures.push(`${at}: ${mismatch}`);
  }
  return failures;
}

/** The fields a form sends as a browser would: hidden and text inputs, checked choices, selects. */
function formFields(form: string): URLSearchParams {
  const fields = new URLSearchParams();
  const attribute = (tag: string, name: string) =>
    new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ?? null;
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attribute(tag, 'name');
    const type = attribute(tag, 'type') ?? 'text';
    if (name === null || type === 'submit' || type === 'button') continue;
    if ((type === 'radio' || type === 'checkbox') && !/\schecked\b/.test(tag)) continue;
    fields.append(name, decodeEntities(attribute(tag, 'value') ?? ''));
  }
  for (const select of form.matchAll(/<select\b[^>]*\sname="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const options = select[2] ?? '';
    const chosen =
      /<option\b[^>]*\sselected\b[^>]*\svalue="([^"]*)"/.exec(options) ??
      /<option\b[^>]*\svalue="([^"]*)"/.exec(options);
    if (chosen?.[1] !== undefined) fields.append(select[1] ?? '', decodeEntities(chosen[1]));
  }
  return fields;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function visibleText(html: string): string {
  const shown = html.replace(/<(style|script|title)\b[\s\S]*?<\/\1>/g, ' ');
  return decodeEntities(shown.replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
}

/** A page a browser landed on, or the redirect it stopped before (`browse`'s `stopBefore`). */
interface Landing {
  status: number;
  url: URL;
  html: string;
  /** Where the redirect answered at `url` leads, when `stopBefore` stopped the browser there. */
  stoppedBefore?: URL;
}

/**
 * Follows redirects as a browser does, cookies kept; the page it lands on, or the redirect
 * `stopBefore` accepts, not followed.
 */
async function browse(
  url: URL,
  jar: CookieJar,
  init: { method: string; body?: string; headers?: Record<string, string> } = { method: 'GET' },
  stopBefore: (next: URL) => boolean = () => false,
): Promise<Landing> {
  let current = url;
  let request = init;
  for (let hop = 0; hop < 20; hop += 1) {
    const response = await fetch(current, {
      method: request.method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...request.headers },
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    jar.store(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const next = new URL(location, current);
      if (stopBefore(next)) {
        return { status: response.status, url: current, html: '', stoppedBefore: next };
      }
      current = next;
      request = { method: 'GET' };
      continue;
    }
    return { status: response.status, url: current, html: await response.text() };
  }
  throw new Error(`more than 20 redirects from ${url.href}`);
}

/**
 * A fresh browser opening a page that asks who is there, and `email` signing in: the page's
 * redirects are followed until they leave its origin (for the identity provider), the person
 * signs in there with the dev password (walkSignIn: the same walk as the console's tests), and
 * the way back is followed to the page it lands on, which must be the page opened (its path:
 * the console keeps no query across a sign-in). Returns that page, or what went wrong.
 */
async function signedInPage(
  target: URL,
  email: string,
  jar: CookieJar,
): Promise<Landing | { problem: string }> {
  const opened = await browse(target, jar, { method: 'GET' }, (next) => {
    return next.origin !== target.origin;
  });
  if (!opened.stoppedBefore) {
    return {
      problem: `opening ${target.href} sent nobody to sign in: it answered ${String(opened.status)}: ${excerpt(visibleText(opened.html))}`,
    };
  }
  let outcome: Awaited<ReturnType<typeof walkSignIn>>;
  try {
    outcome = await walkSignIn(opened.stoppedBefore, email, {
      jar,
      isDestination: (next) => next.origin === target.origin,
    });
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  if ('refused' in outcome) {
    const { status, url, html } = outcome.refused;
    return {
      problem: `signing in as ${email} at ${url.origin} was refused (${String(status)}): ${excerpt(visibleText(html))}`,
    };
  }
  const back = await browse(outcome.reached, jar);
  if (back.url.origin !== target.origin || back.url.pathname !== target.pathname) {
    return {
      problem: `signed in as ${email}, the browser landed on ${back.url.origin}${back.url.pathname} (${String(back.status)}), not on the page opened: ${excerpt(visibleText(back.html))}`,
    };
  }
  return back;
}

/**
 * Sends the page's form that has the button labelled `press`, as the browser sends it (its
 * fields, the button's name and value, from the page's origin); what went wrong, or null.
 */
async function pressButton(page: Landing, press: string, jar: CookieJar): Promise<string | null> {
  for (const [form = ''] of page.html.matchAll(/<form\b[\s\S]*?<\/form>/g)) {
    const button = [...form.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)].find(
      ([, , label = '']) => visibleText(label) === press,
    );
    if (!button) continue;
    const attributes = button[1] ?? '';
    const fields = formFields(form);
    const name = /\sname="([^"]*)"/.exec(attributes)?.[1];
    if (name !== undefined) fields.append(name, /\svalue="([^"]*)"/.exec(attributes)?.[1] ?? '');
    const action = new URL(decodeEntities(/\saction="([^"]*)"/.exec(form)?.[1] ?? ''), page.url);
    const method = (/\smethod="([^"]*)"/.exec(form)?.[1] ?? 'get').toUpperCase();
    const sent = await browse(
      method === 'GET'
        ? new URL(`${action.href.split('?')[0] ?? ''}?${fields.toString()}`)
        : action,
      jar,
      method === 'GET'
        ? { method }
        : {
            method,
            body: fields.toString(),
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              origin: page.url.origin,
              'sec-fetch-site': 'same-origin',
            },
          },
    );
    return sent.status < 400
      ? null
      : `pressing ${press} answered ${String(sent.status)}: ${excerpt(visibleText(sent.html))}`;
  }
  return `no "${press}" button on ${page.url.href}: ${excerpt(visibleText(page.html))}`;
}

/**
 * Does what a person does in a browser, over HTTP, in a fresh browser (no cookies, as a new
 * private window); returns what went wrong, or null.
 *
 * - `open <url>`: the page must answer 200.
 * - `open <url> and press Continue` on Gatehouse's connect page: the whole hosted connect flow,
 *   as a person completes it: Continue, then at the demo app's consent page a user name and
 *   Allow, back to Gatehouse in the same browser (cookies kept); it must end on the success page
 *   ("… is connected") or at the link's `redirect_url` with `status=connected`.
 * - `open <url> and press <Label>` on a page with a form (the hosted approval page: Approve,
 *   Reject): the form is sent as the browser sends it (its fields, the button's name and value,
 *   from the page's origin); the page it leads to must answer below 400.
 * - With `signedInAs` (`as <email>, open …`), the page is one behind a sign-in (the console's):
 *   the browser follows it to the identity provider, signs in there as that person with the dev
 *   password, and must land back on the page opened, which must answer 200; then the press as
 *   above, with the session the sign-in made.
 */
export async function performBrowserStep(
  url: string,
  press: string | null,
  signedInAs?: string,
): Promise<string | null> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return `"${url}" is not a URL`;
  }
  const jar = new CookieJar();
  if (press === 'Continue' && signedInAs === undefined) {
    // A connect link is walked whole, as a person completes it; a page with no connect flow's
    // Continue link is any other page.
    const walked = await walkConnectLink(target.href).catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('no Continue link')) return null;
      throw error;
    });
    if (walked?.redirectedTo) {
      return walked.redirectedTo.searchParams.get('status') === 'connected'
        ? null
        : `the connect flow ended at ${walked.redirectedTo.href}, not connected`;
    }
    if (walked) {
      return walked.status === 200 && / is connected/.test(walked.html)
        ? null
        : `the connect flow ended on a ${String(walked.status)} page: ${excerpt(visibleText(walked.html))}`;
    }
  }
  const opened =
    signedInAs === undefined
      ? await browse(target, jar)
      : await signedInPage(target, signedInAs, jar);
  if ('problem' in opened) return opened.problem;
  if (opened.status !== 200) {
    return `opening ${target.href}${signedInAs === undefined ? '' : ` as ${signedInAs}`} answered ${String(opened.status)}: ${excerpt(visibleText(opened.html))}`;
  }
  return press === null ? null : pressButton(opened, press, jar);
}

/**
 * Runs a walkthrough block's steps in the session, in order, and returns every way the doc is
 * wrong, each with its file:line: a command that fails, a status or JSON shape that differs
 * from the answer shown, a browser step that cannot be done, a problem of the doc's own syntax.
 * All steps run even after a failure, so one run shows all that is stale.
 */
export async function runWalkthroughBlock(
  walkthrough: WalkthroughBlock,
  session: BashSession,
  addresses: Addresses,
): Promise<string[]> {
  const { doc } = walkthrough.block;
  const failures: string[] = [];
  for (const step of walkthrough.steps) {
    if (step.kind === 'problem') {
      failures.push(`${where(doc, step.line)}: ${step.message}`);
    } else if (step.kind === 'command') {
      failures.push(...answerFailures(doc, step, await session.run(step.text), addresses));
    } else {
      const url = await session.expand(step.action.url);
      const problem = await performBrowserStep(url, step.action.press, step.action.signedInAs);
      if (problem) failures.push(`${where(doc, step.line)}: browser: ${problem}`);
    }
  }
  return failures;
}
