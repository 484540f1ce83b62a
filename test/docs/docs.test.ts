// Docs that cannot drift: the checks of README.md and every folder README that need no running
// service. What each check reads and how the docs mark their blocks is described in
// test/docs/walkthrough.test.ts (the walkthrough, whose answers are run against a real stack)
// and in test/README.md. Each check is also run on a fixture doc that went stale on purpose
// (test/docs/fixtures/), to show that it fails, at the stale line, when the docs do.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { buildProgram } from '../../infra/cli/program.js';
import { parseShape, shapeMismatches } from './answer-shape.js';
import {
  checkCommandLine,
  cliLeaves,
  commandLines,
  packageScripts,
  type CommandCheck,
} from './cli-lines.js';
import { compileSnippets } from './compile-snippets.js';
import {
  codeBlocks,
  findDocs,
  isTypeScript,
  markerProblems,
  readDoc,
  where,
  type CodeBlock,
  type Doc,
} from './doc-blocks.js';
import { anchorsOf, headingText, linkProblem, relativeLinks } from './links.js';
import { walkthroughSteps } from './walkthrough.js';

const docs = findDocs();
const readme = docs[0] as Doc;
const fixture = (name: string) => readDoc(`test/docs/fixtures/${name}`);

/** The 1-based line of the doc's first line containing `text`: fixtures are named by content. */
function lineOf(doc: Doc, text: string, after = 0): number {
  const index = doc.lines.findIndex((line, at) => at >= after && line.includes(text));
  if (index === -1) throw new Error(`${doc.path} has no line with ${text}`);
  return index + 1;
}

/** A doc made in the test, for the syntax cases no file needs to hold. */
function inlineDoc(text: string): Doc {
  return { path: 'inline.md', absolute: '/inline.md', lines: text.split('\n') };
}

describe('the docs', () => {
  it('are README.md and the README.md of every folder below the top (none of node_modules, .data, .tools)', () => {
    const paths = docs.map((doc) => doc.path);
    expect(paths[0]).toBe('README.md');
    expect(paths.filter((path) => /(^|\/)(node_modules|\.data|\.tools)\//.test(path))).toEqual([]);
    expect(paths.slice(1).every((path) => path.endsWith('/README.md'))).toBe(true);
  });

  it('mark only blocks, with markers the tests know (a stray one would leave a block unchecked)', () => {
    expect(docs.flatMap(markerProblems)).toEqual([]);
  });
});

// One TypeScript program for every block, the fixtures' included: the libraries and the package
// are loaded once.
const snippets = docs.flatMap((doc) => codeBlocks(doc)).filter(isTypeScript);
const staleSnippets = codeBlocks(fixture('stale-snippets.md')).filter(isTypeScript);
const compiled = new Map<CodeBlock, string[]>();

beforeAll(() => {
  const toCompile = [...snippets, ...staleSnippets].filter((block) => block.marker !== 'fragment');
  for (const { block, failures } of compileSnippets(toCompile)) compiled.set(block, failures);
}, 300_000);

describe('TypeScript in the docs compiles against the package', () => {
  for (const block of snippets) {
    const at = where(block.doc, block.fenceLine);
    if (block.marker === 'fragment') {
      it(`${at} is a fragment, not compiled`, () => {
        expect(compiled.has(block)).toBe(false);
      });
    } else {
      it(`${at} compiles`, () => {
        expect(compiled.get(block)).toEqual([]);
      });
    }
  }
});

const program = buildProgram();
const scripts = packageScripts();
const check = (doc: Doc): CommandCheck[] =>
  commandLines(doc).map((line) => checkCommandLine(program, scripts, line));

describe('command lines in the docs name real commands, flags and npm scripts', () => {
  for (const doc of docs) {
    it(doc.path, () => {
      expect(check(doc).flatMap((checked) => checked.failures)).toEqual([]);
    });
  }

  it('every command of the CLI appears in README.md', () => {
    const shown = new Set(check(readme).map((checked) => checked.command));
    expect(cliLeaves(program).filter((leaf) => !shown.has(leaf))).toEqual([]);
  });
});

describe('relative links and anchors in the docs resolve', () => {
  for (const doc of docs) {
    it(doc.path, () => {
      const problems = relativeLinks(doc).map((link) => linkProblem(link));
      expect(problems.filter((problem) => problem !== null)).toEqual([]);
    });
  }
});

describe('each check fails when the docs go stale', () => {
  it('a snippet that no longer compiles is reported at its line, with the diagnostic; a fragment is not compiled', () => {
    const doc = fixture('stale-snippets.md');
    const failures = staleSnippets.flatMap((block) => compiled.get(block) ?? []);
    const optionLine = lineOf(doc, 'apiToken:');
    const importLine = lineOf(doc, 'import { GatehouseClient }');
    const countLine = lineOf(doc, "const count: number = 'three'");
    expect(failures).toEqual([
      expect.stringMatching(
        new RegExp(
          `^test/docs/fixtures/stale-snippets\\.md:${String(optionLine)}: error TS2353: .*'apiToken'`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^test/docs/fixtures/stale-snippets\\.md:${String(importLine)}: error TS2305: .*'GatehouseClient'`,
        ),
      ),
      `test/docs/fixtures/stale-snippets.md:${String(countLine)}: error TS2322: Type 'string' is not assignable to type 'number'.`,
    ]);
    const fragment = staleSnippets.find((block) => block.marker === 'fragment');
    expect(fragment && compiled.has(fragment)).toBe(false);
    expect(fragment?.fenceLine).toBe(lineOf(doc, '<!-- doc-test: fragment -->') + 2);
  });

  it('a command or flag the CLI does not have, a missing npm script, a refused value or a missing required option is reported at its line', () => {
    const doc = fixture('stale-cli.md');
    const failures = check(doc).flatMap((checked) => checked.failures);
    const at = (text: string) => `test/docs/fixtures/stale-cli.md:${String(lineOf(doc, text))}`;
    expect(failures).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${at('keys creat ')}: gatehouse keys creat .*unknown command "gatehouse keys creat" \\(the commands of "gatehouse keys": create, list, revoke\\)$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(`^${at('--colour red')}: .*unknown option --colour of "gatehouse keys list"`),
      ),
      expect.stringMatching(
        new RegExp(
          `^${at('no-such-script')}: npm run no-such-script: no script "no-such-script" in package\\.json`,
        ),
      ),
      expect.stringMatching(new RegExp(`^${at('--access superuser')}: .*--access superuser: `)),
      expect.stringMatching(
        new RegExp(`^${at('webhooks set')}: .*"gatehouse webhooks set" requires --url <url>$`),
      ),
      expect.stringMatching(
        new RegExp(
          `^${at('`gatehouse audit check`')} \\(inline code\\): gatehouse audit check: unknown command "gatehouse audit check"`,
        ),
      ),
    ]);
  });

  it('a broken link or anchor is reported at its line; inline code is not a link', () => {
    const doc = fixture('stale-links.md');
    const problems = relativeLinks(doc)
      .map((link) => linkProblem(link))
      .filter((problem) => problem !== null);
    const at = (text: string) => `test/docs/fixtures/stale-links.md:${String(lineOf(doc, text))}`;
    expect(problems).toEqual([
      `${at('a file that is gone')}: ../../../no-such-file.md: no such file no-such-file.md`,
      expect.stringMatching(
        new RegExp(
          `^${at('a heading that was renamed')}: \\.\\./\\.\\./\\.\\./README\\.md#no-such-heading: no heading with anchor #no-such-heading in README\\.md`,
        ),
      ),
      `${at('a heading of this doc that is not there')}: #not-here: no heading with anchor #not-here in test/docs/fixtures/stale-links.md`,
      `${at('wraps onto the next line')}: #gone-too: no heading with anchor #gone-too in test/docs/fixtures/stale-links.md`,
    ]);
  });

  it('anchors follow GitHub: punctuation dropped, code without backticks, repeats numbered', () => {
    expect([
      ...anchorsOf([
        '# Run it',
        '## Writes and retries: `Idempotency-Key`',
        '## Notes',
        '## Notes',
        '### [Linked](x.md) _emphasis_ and snake_case',
        '```sh',
        '# not a heading',
        '```',
      ]),
    ]).toEqual([
      'run-it',
      'writes-and-retries-idempotency-key',
      'notes',
      'notes-1',
      'linked-emphasis-and-snake_case',
    ]);
    expect(headingText('The `gatehouse` command')).toBe('The gatehouse command');
  });

  it('a stray or unknown marker is reported at its line', () => {
    const doc = inlineDoc(
      [
        '<!-- doc-test: fragment -->',
        '',
        'prose between the marker and the block',
        '',
        '```ts',
        'const x = 1;',
        '```',
        '',
        '<!-- doc-test: walkthru -->',
        '',
        '```sh',
        'true',
        '```',
      ].join('\n'),
    );
    expect(markerProblems(doc)).toEqual([
      "inline.md:1: the marker is not right above a code block's opening fence",
      'inline.md:9: unknown marker "doc-test: walkthru" (known: fragment, walkthrough)',
    ]);
  });
});

describe("the walkthrough's answers, as the tests read them", () => {
  const stepsOf = (text: string) => {
    const [block] = codeBlocks(inlineDoc(text));
    if (!block) throw new Error('no block');
    return walkthroughSteps(block);
  };

  it('a command spread over lines is one step; its answer may span comment lines and end in prose', () => {
    const steps = stepsOf(
      [
        '```sh',
        'curl -s -X POST "$GATEHOUSE_URL/v1/connect/links" \\',
        "  -d '{",
        '    "user": "u_1"',
        "  }'",
        '# 201 {"id":"…",',
        '#  "url":"…",…}   one hour, single use',
        'run() { curl -s "$1"; }',
        '# prose that answers nothing',
        'run x',
        '# 403 approval_required (status only)',
        '```',
      ].join('\n'),
    );
    expect(steps.map((step) => [step.kind, step.line])).toEqual([
      ['command', 2],
      ['command', 8],
      ['command', 10],
    ]);
    const [first, second, third] = steps;
    expect(first?.kind === 'command' && first.answer).toEqual({
      line: 6,
      status: 201,
      shape: parseShape('{"id":"…","url":"…",…}'),
    });
    expect(second?.kind === 'command' && second.answer).toBeNull();
    expect(third?.kind === 'command' && third.answer).toEqual({
      line: 11,
      status: 403,
      shape: null,
    });
  });

  it('an answer no command is right above, an unclosed shape and an unknown browser step are problems at their lines', () => {
    const steps = stepsOf(
      [
        '```sh',
        'true',
        '',
        '# 200 {"ok":true}',
        'true',
        '# {"never":"closed"',
        '# browser: open $URL and press Continue',
        '# browser: fly to $URL',
        '```',
      ].join('\n'),
    );
    expect(steps).toEqual([
      { kind: 'command', line: 2, text: 'true', answer: null },
      {
        kind: 'problem',
        line: 4,
        message: '"# 200 {"ok":true}" reads as an answer, but no command is right above it',
      },
      { kind: 'command', line: 5, text: 'true', answer: null },
      { kind: 'problem', line: 6, message: "the answer's JSON shape is never closed" },
      { kind: 'browser', line: 7, action: { url: '$URL', press: 'Continue' } },
      {
        kind: 'problem',
        line: 8,
        message: expect.stringContaining('unknown browser step "browser: fly to $URL"'),
      },
    ]);
  });

  it('a person\'s browser step names who signs in, with the comma or without; "as" without an email is unknown', () => {
    const steps = stepsOf(
      [
        '```sh',
        '# browser: as alice@example.com, open $REVIEW_URL and press Approve',
        '# browser: as carol@example.com open ${URL}/inbox',
        '# browser: as Alice, open $REVIEW_URL',
        '```',
      ].join('\n'),
    );
    expect(steps).toEqual([
      {
        kind: 'browser',
        line: 2,
        action: { url: '$REVIEW_URL', press: 'Approve', signedInAs: 'alice@example.com' },
      },
      {
        kind: 'browser',
        line: 3,
        action: { url: '${URL}/inbox', press: null, signedInAs: 'carol@example.com' },
      },
      {
        kind: 'problem',
        line: 4,
        message: expect.stringContaining(
          'unknown browser step "browser: as Alice, open $REVIEW_URL"',
        ),
      },
    ]);
  });

  it('"…" is any value, … in a string any text, a bare … "and more"; without it, exactly those shown', () => {
    const shape = parseShape('{"id":"t_…","tags":["a",…],"owner":"…",…}');
    expect(shapeMismatches(shape, { id: 't_1', tags: ['a', 'b'], owner: null, extra: 1 })).toEqual(
      [],
    );
    expect(shapeMismatches(shape, { id: 'x_1', tags: ['b'], owner: 1 })).toEqual([
      '$.id: expected "t_…", got "x_1"',
      '$.tags: no element matches the shown element 1 ($.tags[0]: expected "a", got "b")',
    ]);
    expect(
      shapeMismatches(parseShape('{"ok":true,"data":[1]}'), { ok: true, data: [1, 2], more: 1 }),
    ).toEqual([
      '$.data: expected 1 elements, got 2: [1,2]',
      '$: members the doc does not show (end it with … if more are expected): "more"',
    ]);
    expect(() => parseShape('{…,"id":1}')).toThrow('a bare … must be the last member');
  });
});
