// Every hosted page, as a real browser lays it out: the connect page, its success
// and error pages, the credential page (and again after a refused entry), the approval review
// page, the decided pages, the page of a link already used, and the codec sign-in page. Each is reached for real on the test stack, then laid out in
// headless Chromium at a phone width and a desktop width (screenshots in `screenshots/`, git-
// ignored, to look at) and at widths between, where no page may scroll sideways and no date,
// id or app name in a heading may break inside itself ("2026-/11-25", "demo-/agent",
// "Connect Acme / Tasks to …").
import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { saveCredentialApp } from '../../activities/db/credential-apps.js';
import { CODEC_PATH } from '../../api/routes/codec.js';
import {
  approvalIdOf,
  linksOf,
  startApprovalStack,
  type ApprovalStack,
} from '../approvals/approval-stack.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/** Where the screenshots go (README, "Test it"). */
const SCREENSHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));
/** The widths each page is photographed at: a phone's and a laptop's. */
const PHOTOGRAPHED = [390, 1280];
/** Where the layout is checked: small phones up to desktops. */
const CHECKED = [320, 336, 352, 360, 375, 390, 400, 414, 430, 480, 600, 768, 1024, 1280];

/** Hyphenated and underscored on purpose: ids like these were seen broken across lines. */
const AGENT = 'demo-agent';
const USER = 'u_123';

let approvals: ApprovalStack;
let browser: Browser;
let agent: TestKey;
/** name → the page's HTML, as the browser received it at its address. */
const pages = new Map<string, string>();

async function captured(page: Page, name: string): Promise<void> {
  pages.set(name, await page.content());
}

const started = stopsAfterAll();

beforeAll(async () => {
  const executablePath = await ensureChromium();
  approvals = started.add(await startApprovalStack());
  const { stack } = approvals;
  await stack.connect(USER);
  // The default policy asks for writes and names nobody: the link is the generic one.
  agent = await createTestKey(stack.db.sql, { env: 'test', access: 'standard', agentId: AGENT });
  browser = started.add(await chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
  const page = await browser.newPage();
  try {
    const link = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: 'u_screens', customer: 'northwind', app: 'acme' },
    });
    expect(link.status).toBe(201);
    const linkUrl = String(link.body.url);
    await page.goto(linkUrl);
    await captured(page, 'connect');
    await page.getByRole('link', { name: /Continue to Acme Tasks/ }).click();
    await page.getByLabel(/user/i).fill('carol');
    await page.getByRole('button', { name: /allow/i }).click();
    await page.waitForURL(/\/connect\/callback/);
    await captured(page, 'connect-success');
    await page.goto(linkUrl);
    await captured(page, 'connect-error-used-link');
    await page.goto(new URL(`/connect/${'x'.repeat(32)}`, linkUrl).href);
    await captured(page, 'connect-error-unknown-link');

    for (const [title, button, name] of [
      ['Ship the report', 'Approve', 'approval-approved'],
      ['Shred the archive', 'Reject', 'approval-rejected'],
    ] as const) {
      const held = await stack.run(
        'acme.create_task',
        { user: USER, input: { title } },
        { key: agent },
      );
      const links = await linksOf(approvals, approvalIdOf(held));
      const decisionLink = Object.values(links)[0] ?? '';
      await page.goto(decisionLink);
      if (button === 'Approve') await captured(page, 'approval-review');
      await page.getByRole('button', { name: button }).click();
      await page.getByRole('heading', { level: 1, name: /Approved|Rejected/ }).waitFor();
      await captured(page, name);
      if (button === 'Approve') {
        await page.goto(decisionLink);
        await captured(page, 'approval-already-decided');
      }
    }
    // An app that takes a credential the user enters: its page, and the page again after a key
    // the page refuses (its message above the field).
    await saveCredentialApp(stack.db.sql, {
      environmentId: stack.environmentId,
      id: 'acme-keyed',
      name: 'Acme Tasks',
      scheme: { scheme: 'api_key', in: 'header', name: 'X-Api-Key' },
      hint: 'Your Acme Tasks API key, under Settings → API keys → Create key.',
      declaredBy: 'test',
    });
    const credentialLink = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: 'u_screens', app: 'acme-keyed' },
    });
    expect(credentialLink.status).toBe(201);
    await page.goto(String(credentialLink.body.url));
    await captured(page, 'connect-credential');
    await page.getByLabel(/API key/).fill('not a key');
    await page.getByRole('button', { name: /Connect Acme Tasks/ }).click();
    await page.getByRole('alert').waitFor();
    await captured(page, 'connect-credential-refused');

    await page.goto(new URL(`${CODEC_PATH}/session`, linkUrl).href);
    await captured(page, 'codec-sign-in');
  } finally {
    await page.close();
  }
  await mkdir(SCREENSHOTS, { recursive: true });
}, 600_000);

interface Layout {
  /** How far the document is wider than the window, in CSS pixels (0: no sideways scroll). */
  overflow: number;
  /** Tokens laid out on more than one line, with the element they are in. */
  broken: string[];
}

/** The layout probe's script: a file of its own, as it runs in the page (this project has no DOM types). */
const PROBE = fileURLToPath(new URL('./layout-probe.js', import.meta.url));

/** What must read as one word, and where. */
const TOKENS = [
  // Every timestamp and date the pages show.
  { pattern: '\\d{4}-\\d{2}-\\d{2}( \\d{2}:\\d{2}:\\d{2} UTC)?', within: 'body' },
  // Ids and names, wherever they appear.
  {
    pattern: [AGENT, USER, 'role:approver', 'acme\\.create_task', 'already_decided'].join('|'),
    within: 'body',
  },
  // The app and the product in a heading.
  { pattern: 'Acme Tasks|Gatehouse', within: 'h1' },
];

function layoutIn(page: Page): Promise<Layout> {
  return page.evaluate<Layout>(`window.layoutProbe(${JSON.stringify(TOKENS)})`);
}

describe('every hosted page, in a real browser', () => {
  it('reached each page it lays out', () => {
    expect([...pages.keys()].sort()).toEqual(
      [
        'approval-already-decided',
        'approval-approved',
        'approval-rejected',
        'approval-review',
        'codec-sign-in',
        'connect',
        'connect-credential',
        'connect-credential-refused',
        'connect-error-unknown-link',
        'connect-error-used-link',
        'connect-success',
      ].sort(),
    );
  });

  it('fits every width without sideways scrolling or a date, id or heading name broken inside', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    try {
      for (const [name, content] of pages) {
        // Each page as received; its styles are inline, and it loads nothing else.
        await page.setViewportSize({ width: CHECKED[0] ?? 320, height: 800 });
        await page.setContent(content);
        await page.addScriptTag({ path: PROBE });
        for (const width of CHECKED) {
          await page.setViewportSize({ width, height: 800 });
          const layout = await layoutIn(page);
          if (layout.overflow > 0)
            problems.push(`${name} at ${width}px: ${layout.overflow}px too wide`);
          for (const token of layout.broken)
            problems.push(`${name} at ${width}px: ${token} broken`);
          if (PHOTOGRAPHED.includes(width)) {
            await page.screenshot({ path: `${SCREENSHOTS}${name}-${width}.png`, fullPage: true });
          }
        }
      }
    } finally {
      await page.close();
    }
    expect(problems).toEqual([]);
  });
});
