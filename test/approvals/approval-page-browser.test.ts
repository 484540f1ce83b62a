import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import type { CallStack } from '../support/call-stack.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import type { TestKey } from '../support/keys.js';
import {
  agentUnderPolicy,
  approvalIdOf,
  linksOf,
  startApprovalStack,
  type ApprovalStack,
} from './approval-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let approvals: ApprovalStack;
let stack: CallStack;
let browser: Browser;
/** Policy `browser` asks alice. */
let agent: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  const executablePath = await ensureChromium();
  approvals = started.add(await startApprovalStack());
  stack = approvals.stack;
  await stack.connect('u_browser');
  agent = await agentUnderPolicy(stack, 'browser', {
    requested_from: ['alice'],
    ttl_seconds: 3600,
  });
  browser = started.add(await chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
}, 600_000);

async function titles(): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user: 'u_browser' });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

describe('the hosted approval page in a real browser', () => {
  it('takes the approver from the webhook’s link to a decision, and the retried call runs once', async () => {
    const input = { title: `browser approval ${randomUUID()}` };
    const run = () => stack.run('acme.create_task', { user: 'u_browser', input }, { key: agent });
    const approvalId = approvalIdOf(await run());
    const links = await linksOf(approvals, approvalId);
    expect(Object.keys(links)).toEqual(['alice']);

    const page = await browser.newPage();
    try {
      await page.goto(links.alice ?? '');
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'browser-bot asks to run acme.create_task',
      );
      await expect(page.locator('pre').first().textContent()).resolves.toContain(input.title);
      // A real browser's POST: its Origin and Sec-Fetch-Site are checked, the form field too.
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Approved');
      await expect(page.locator('.lead').first().textContent()).resolves.toContain('alice');
    } finally {
      await page.close();
    }

    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
    expect(view.body).toMatchObject({ status: 'approved', decided_by: 'alice (decision link)' });
    expect(await titles()).not.toContain(input.title);

    const ran = await run();
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect((await titles()).filter((title) => title === input.title)).toHaveLength(1);
  });
});
