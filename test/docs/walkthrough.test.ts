// README.md's walkthrough runs as the README shows it, against a real stack.
//
// How the docs are written for the doc tests (test/docs/):
//
// - The docs are README.md and every README.md below the top-level folders (not node_modules,
//   .data, .tools). A marker is an HTML comment alone on its line, right above a fenced block
//   (blank lines between them are fine: prettier puts one there):
//     <!-- doc-test: fragment -->      a ```ts block that is deliberately incomplete: not compiled,
//                                      and named in a test title ("README.md:123 is a fragment,
//                                      not compiled")
//     <!-- doc-test: walkthrough -->   a ```sh block of README.md's walkthrough
//   Any other `doc-test:` marker, or one with prose between it and its block, fails the tests.
// - Every other ```ts / ```typescript block is a module of its own, type-checked with the
//   repository's tsconfig.json, imports written as a user writes them ('gatehouse/client',
//   '@temporalio/client'; in a folder README, relative to that folder).
// - Every `gatehouse …`, `npx gatehouse …`, `node infra/cli/bin.js …` and `npm run <script>`
//   command in any code block (not TypeScript, JavaScript or JSON ones), and in inline code that
//   starts with one, must name a real command of the CLI (infra/cli/program.ts) with options it
//   has (a literal value is checked by the option; in a block, required options must be there);
//   `npm run x` must be a script of package.json. Every command of the CLI must appear so in
//   README.md. `<name>` and `…` are placeholders, `[--flag <x>]` an option that may be left out.
// - Every relative link ([x](path), [x](path#anchor), [x](#anchor)) must reach a file of the
//   repository and, with an anchor, a heading of that markdown file by GitHub's rules
//   (github-slugger), or a line (#L12) of another file.
//
// The walkthrough: its blocks run in document order in ONE bash session, started in the
// repository's root, after `gatehouse dev` has started (on this run's Postgres and Temporal) and
// its banner's `export GATEHOUSE_URL=… AGENT_KEY=… ADMIN_KEY=…` line has run in that shell. The
// shell also has GATEHOUSE_DATA_DIR (so `npx gatehouse env` finds the stack) and the stack's
// DATABASE_URL, ENCRYPTION_KEY, PUBLIC_URL, APP_URLS, WEBHOOK_ALLOW_PRIVATE and
// MCP_APPS_ALLOW_PRIVATE (so the CLI reaches the same database, keys and addresses as the
// stack, as a reader's CLI does beside `gatehouse dev`). Then, line by line:
//
// - A command is one or more lines (bash decides where it ends: `\`, open quotes, `{ … }`). It
//   must exit 0. Its standard input is empty.
// - Its answer is on the comment lines right after it (no blank or prose line between):
//       # 201 {"id":"…","url":"http://127.0.0.1:3000/connect/…",…}
//   an optional 3-digit HTTP status, then optionally a JSON shape, which may go on over the
//   following `# ` lines until its brackets close; text after the closing bracket, or after a
//   status that no shape follows (`# 403 approval_required`), is prose.
//     - The status is that of the last response `curl` received during the command (in this
//       shell `curl` adds `-D <file>`, so its output is untouched; a command that passes its own
//       -D has no status).
//     - The shape is matched against everything the command printed on stdout, parsed as JSON:
//       `"…"` (or a bare `…`) as a value is any value, `…` inside a string any text, a bare `…`
//       as the last member of an object or array "and more"; without it the object's members are
//       exactly those shown (any order) and the array's elements exactly those shown (in order;
//       with `…`, the shown ones in that order among others). The default addresses
//       http://127.0.0.1:3000 (API) and http://127.0.0.1:4010 (demo app) stand for the run's own.
//   Any other comment line (not starting with a status, `{` or `[`) is prose. A line that reads
//   as an answer with no command right above it is an error.
// - A browser step is a comment line of its own:
//       # browser: open $CONNECT_URL and press Continue
//     the whole hosted connect flow, as a person completes it: Continue, sign in at the demo app
//     (any user name) and Allow, back to Gatehouse in the same browser; it must end on the
//     "… is connected" page (or the link's redirect_url with status=connected);
//       # browser: open $DECISION_URL and press Approve      (or Reject, or any form button)
//     the page's form sent as a browser sends it (its fields, the button, from the page's
//     origin); the answer must be below 400;
//       # browser: open $URL
//     the page must answer 200;
//       # browser: as alice@example.com, open $REVIEW_URL and press Approve
//     a person signed in to the console: the page's redirects are followed to the identity
//     provider (`gatehouse dev`'s sign-in), the email signs in there with the dev password, and
//     the way back must land on the page opened (the same path), answering 200; then the press as
//     above (the form with that button, from the page's origin, answering below 400), or, without
//     `and press …`, nothing more.
//   Each browser step is a fresh browser (no cookies, as a new private window), done over HTTP.
//   The URL is a word of the shell: `$VAR`, `${VAR}/path`, or written out.
// - Capture what a later command needs as a reader would: VAR=$(curl … | node -pe '…') or
//   with the gatehouse CLI (jq only if the README's prerequisites name it).
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { auditSealScheduleId } from '../../worker/audit-seal-schedule.js';
import { createTestDatabase } from '../support/database.js';
import { devDataFolder, spawnDev, stopDev, untilReady } from '../support/dev-process.js';
import { testEnv } from '../support/stack-env.js';
import { stopsAfterAll } from '../support/stops.js';
import { readDoc, REPO_ROOT, where } from './doc-blocks.js';
import {
  BashSession,
  runWalkthroughBlock,
  walkthroughBlocks,
  type Addresses,
} from './walkthrough.js';

const readme = readDoc('README.md');
const walkthrough = walkthroughBlocks(readme);
const staleDoc = readDoc('test/docs/fixtures/stale-walkthrough.md');
const stale = walkthroughBlocks(staleDoc);

/** A stack start and a block's commands (each `npx gatehouse` loads the CLI) on a busy machine. */
const GENEROUS_MS = 600_000;

const started = stopsAfterAll(120_000);
let shellEnv: Record<string, string>;
let exportLine: string;
let addresses: Addresses;
let session: BashSession;

/** A shell of the walkthrough, with the stack's variables set as the banner's line sets them. */
async function walkthroughShell(): Promise<BashSession> {
  const shell = await BashSession.start({ cwd: REPO_ROOT, env: shellEnv });
  started.push(() => shell.close());
  const exported = await shell.run(exportLine);
  if (exported.code !== 0) throw new Error(`the banner's export line failed: ${exported.stderr}`);
  return shell;
}

beforeAll(async () => {
  // `gatehouse dev` itself, on this run's Postgres (a database of its own) and Temporal (a task
  // queue of its own), so it starts neither: everything else is as a reader's.
  const db = started.add(await createTestDatabase());
  const taskQueue = `docs-${randomBytes(6).toString('hex')}`;
  const temporalAddress = testEnv('temporalAddress');
  // The audit seal schedule it makes outlives it in the shared Temporal: deleted after.
  started.push(async () => {
    const connection = await Connection.connect({ address: temporalAddress });
    try {
      await new Client({ connection }).schedule
        .getHandle(auditSealScheduleId(taskQueue))
        .delete()
        .catch(() => undefined);
    } finally {
      await connection.close();
    }
  });
  const { dir } = await devDataFolder('gatehouse-docs-');
  started.push(() => rm(dir, { recursive: true, force: true }));
  const dev = spawnDev({
    dataDir: dir,
    env: {
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      // A loaded machine may take seconds to start a workflow; the production deadline (10 s)
      // is not what the walkthrough is about.
      REQUEST_DEADLINE_MS: '30000',
    },
  });
  started.push(() => stopDev(dev));
  await untilReady(dev, GENEROUS_MS);

  const line = /^ {2}(export GATEHOUSE_URL=.*)$/m.exec(dev.output())?.[1];
  if (!line) throw new Error(`no export line in the banner:\n${dev.output()}`);
  exportLine = line;
  const apiUrl = dev.field('API');
  const demoAppUrl = dev.field('Demo app');
  const state = JSON.parse(await readFile(path.join(dir, 'local-state.json'), 'utf8')) as {
    encryptionKey: string;
  };
  shellEnv = {
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '',
    LANG: 'C.UTF-8',
    GATEHOUSE_DATA_DIR: dir,
    DATABASE_URL: db.url,
    ENCRYPTION_KEY: state.encryptionKey,
    PUBLIC_URL: apiUrl,
    APP_URLS: JSON.stringify({ acme: demoAppUrl }),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    MCP_APPS_ALLOW_PRIVATE: 'true',
  };
  addresses = { 'http://127.0.0.1:3000': apiUrl, 'http://127.0.0.1:4010': demoAppUrl };
  session = await walkthroughShell();
}, GENEROUS_MS);

describe("README.md's walkthrough runs and answers as shown", () => {
  it('README.md has a walkthrough', () => {
    expect(walkthrough.length).toBeGreaterThan(0);
  });

  for (const block of walkthrough) {
    it(
      `${where(readme, block.block.fenceLine)} runs and answers as shown`,
      async () => {
        expect(await runWalkthroughBlock(block, session, addresses)).toEqual([]);
      },
      GENEROUS_MS,
    );
  }
});

describe('the walkthrough check fails when the walkthrough goes stale', () => {
  it(
    "a wrong status, a wrong shape, a failing command, browser steps that cannot be done (a person's among them) are each reported at their line; the sound steps pass",
    async () => {
      const shell = await walkthroughShell();
      const failures: string[] = [];
      for (const block of stale)
        failures.push(...(await runWalkthroughBlock(block, shell, addresses)));
      /** Where the fixture's line equal to `text` (trimmed) is, the `nth` such line. */
      const at = (text: string, nth = 0) => {
        const lines = staleDoc.lines.flatMap((line, index) =>
          line.trim() === text ? [index + 1] : [],
        );
        const line = lines[nth];
        if (line === undefined) throw new Error(`the fixture has no line ${text}`);
        return where(staleDoc, line);
      };
      const starting = (prefix: string) => expect.stringMatching(new RegExp(`^${escape(prefix)}`));
      const notFound =
        'curl -s -H "Authorization: Bearer $AGENT_KEY" "$GATEHOUSE_URL/v1/no-such-route"';
      const listing =
        'curl -s -H "Authorization: Bearer $AGENT_KEY" "$GATEHOUSE_URL/v1/users/u_stale/connections"';
      expect(failures).toEqual([
        starting(
          `${at('# 200 {"error":{"code":"not_found",…}}')} (the answer of ${at(notFound, 1)}): status 404, the doc shows 200`,
        ),
        // The link works once: the second walk ends on the page that says so.
        expect.stringMatching(
          new RegExp(
            `^${escape(`${at('# browser: open $CONNECT_URL and press Continue', 1)}: browser: the connect flow ended on a 410 page: `)}.*Error code link_used$`,
          ),
        ),
        `${at('# {"data":[{"id":"…","app":"acme","status":"revoked",…}],…}')} (the answer of ${at(listing)}): $.data[0].status: expected "revoked", got "active"`,
        // Alice signs in and sees the approval, decided: no button to press any more.
        starting(
          `${at('# browser: as alice@example.com, open $REVIEW_URL and press Approve')}: browser: no "Approve" button on ${addresses['http://127.0.0.1:3000'] ?? ''}/console/development/inbox/`,
        ),
        // Nora signs in at the provider, but has no role in the environment: no session.
        expect.stringMatching(
          new RegExp(
            `^${escape(`${at('# browser: as nobody@example.com, open $REVIEW_URL')}: browser: signed in as nobody@example.com, the browser landed on ${addresses['http://127.0.0.1:3000'] ?? ''}/console/callback (403), not on the page opened: `)}.*You have no role in this environment`,
          ),
        ),
        `${at('false')}: the command exited 1`,
        starting(
          `${at('# browser: wave at the screen')}: unknown browser step "browser: wave at the screen"`,
        ),
      ]);
    },
    GENEROUS_MS,
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
