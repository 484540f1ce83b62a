// The console's Calls section on the real stack: the audit log as the API lists it (the same
// query), its filters and keyset pages, one event in full with its approval, trace and workflow
// links, and the trail's integrity over the last day, intact and then tampered with. Read in
// headless Chromium by people signed in through the real identity provider, at a phone's and a
// desktop's width (screenshots in `screenshots/`).
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { v7 as uuidv7 } from 'uuid';
import { sealEnvironment } from '../../activities/audit/seal-audit.js';
import { registerSigningKey } from '../../activities/db/audit-checkpoints.js';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import { parseAuditSigningKey } from '../../infra/audit-signing-key.js';
import { approvalIdOf } from '../approvals/approval-stack.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import { eventually } from '../support/eventually.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/** Where the screenshots go (README, "Test it"). */
const SCREENSHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));
const TRACES = 'https://traces.example.com/trace/{trace_id}?from=gatehouse';
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const USER = 'u_calls';
/** Events written straight into the log, to page through: more than one page of 50. */
const PAGED = 60;

let world: ConsoleStack;
let reader: TestKey;
let writer: TestKey;
/** The events the test made, by what they are. */
const events = {} as Record<'read' | 'refused' | 'held' | 'approvedRun', string>;
const started = stopsAfterAll();

beforeAll(async () => {
  world = started.add(
    await startConsoleStack({
      env: { TRACE_URL_TEMPLATE: TRACES, TEMPORAL_UI_URL: `${TEMPORAL_UI}/namespaces/` },
    }),
  );
  const { stack } = world;
  await stack.connect(USER);
  await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
  reader = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'reader-bot',
  });
  writer = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'writer-bot',
  });

  const read = await stack.run('acme.list_tasks', { user: USER }, { key: reader });
  expect(read.status).toBe(200);
  const refused = await stack.run('acme.no_such_action', { user: USER }, { key: reader });
  expect(refused.status).toBeGreaterThanOrEqual(400);
  const write = () =>
    stack.run('acme.create_task', { user: USER, input: { title: 'Ship it' } }, { key: writer });
  const approvalId = approvalIdOf(await write());
  const decided = await stack.request(
    stack.approver,
    'POST',
    `/v1/approvals/${approvalId}/approve`,
  );
  expect(decided.status).toBe(200);
  expect((await write()).status).toBe(200);

  const rows = await stack.db.sql<{ id: string; action: string; decision: string }[]>`
    select id, action, decision from audit_events
    where environment_id = ${stack.environmentId} order by seq`;
  const find = (action: string, decision: string) =>
    rows.find((row) => row.action === action && row.decision === decision)?.id ?? '';
  events.read = find('acme.list_tasks', 'allowed');
  events.refused = find('acme.no_such_action', 'denied');
  events.held = find('acme.create_task', 'blocked');
  events.approvedRun = find('acme.create_task', 'allowed');
  for (const id of Object.values(events)) expect(id).not.toBe('');

  await insertAuditEvents(
    stack.db.sql,
    Array.from({ length: PAGED }, (_, n) => ({
      id: uuidv7(),
      environmentId: stack.environmentId,
      action: 'acme.list_tasks',
      scope: 'read' as const,
      decision: 'allowed' as const,
      reason: null,
      agentId: 'paging-bot',
      via: 'api',
      userExternalId: 'u_paging',
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: { action: 'acme.list_tasks', user: 'u_paging', n },
      response: { ok: true },
      traceId: `trace-${String(n)}`,
      policyId: null,
      policyVersion: null,
    })),
  );
  // Everything so far sealed into a checkpoint, as the worker's schedule would.
  const signingKey = parseAuditSigningKey(Buffer.alloc(32, 7).toString('base64'), 'c1');
  await registerSigningKey(stack.db.sql, signingKey);
  await sealEnvironment({ sql: stack.db.sql, signingKey, settleSeconds: 0 }, stack.environmentId);
  await mkdir(SCREENSHOTS, { recursive: true });
}, 600_000);

/** No sideways scrolling: the page fits the window it is shown in. */
async function fitsWidth(page: Page): Promise<boolean> {
  // A string, evaluated in the page: this program is compiled without the DOM's types.
  return (
    (await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')) === true
  );
}

/** The event ids the page's list links to, in its order. */
async function listedIds(page: Page): Promise<string[]> {
  const hrefs = await page
    .locator('table.list tbody a')
    .evaluateAll((links: { getAttribute(name: string): string | null }[]) =>
      links.map((link) => link.getAttribute('href') ?? ''),
    );
  return hrefs.map((href) => href.slice(href.lastIndexOf('/') + 1));
}

async function apiListedIds(query: string): Promise<string[]> {
  const answer = await world.stack.request(world.stack.key, 'GET', `/v1/audit?${query}`);
  expect(answer.status).toBe(200);
  return (answer.body.data as { id: string }[]).map((event) => event.id);
}

describe('the Calls section', () => {
  it('lists the audit log as the API does, under the trail’s integrity, at a phone’s and a desktop’s width', async () => {
    const { sql } = world.stack.db;
    const [newest] = await sql<{ lastSeq: string; eventCount: number }[]>`
      select last_seq, event_count from audit_checkpoints
      where environment_id = ${world.stack.environmentId} order by last_seq desc limit 1`;
    const alice = await world.signedInContext('alice@example.com', { width: 1280, height: 900 });
    for (const width of [1280, 390]) {
      await alice.page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await alice.page.goto(`${world.base}/calls`);
      await expect(alice.page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'Calls',
      );
      await expect(
        alice.page.getByRole('link', { name: 'Calls', exact: true }).getAttribute('aria-current'),
      ).resolves.toBe('page');
      const integrity = alice.page.getByRole('region', {
        name: 'Audit trail integrity',
        exact: true,
      });
      await expect(integrity.textContent()).resolves.toContain(`seq ${newest?.lastSeq ?? '?'}`);
      await expect(integrity.textContent()).resolves.toContain(
        `(${String(newest?.eventCount)} events)`,
      );
      await expect(integrity.locator('.badge').first().textContent()).resolves.toBe('Intact');
      expect(await listedIds(alice.page)).toEqual(await apiListedIds('limit=50'));
      expect(await fitsWidth(alice.page)).toBe(true);
      // One user's calls, for a picture of every decision at a readable length.
      await alice.page.goto(`${world.base}/calls?user=${USER}`);
      expect(await listedIds(alice.page)).toEqual(await apiListedIds(`user=${USER}`));
      expect(await fitsWidth(alice.page)).toBe(true);
      await alice.page.screenshot({
        path: `${SCREENSHOTS}console-calls-${String(width)}.png`,
        fullPage: true,
      });
    }
    await alice.context.close();
  });

  it('filters by agent, user, action, decision and time, and says what it cannot read', async () => {
    const { page, context } = await world.signedInContext('olivia@example.com');
    const shown = async (query: string) => {
      const answer = await page.goto(`${world.base}/calls?${query}`);
      return { status: answer?.status(), ids: await listedIds(page) };
    };
    expect((await shown('agent=reader-bot')).ids).toEqual([events.refused, events.read]);
    expect((await shown('agent=writer-bot&decision=blocked')).ids).toEqual([events.held]);
    expect((await shown(`user=${USER}&decision=denied`)).ids).toEqual(
      await apiListedIds(`user=${USER}&decision=denied`),
    );
    expect((await shown('action=acme.create_task')).ids).toEqual([events.approvedRun, events.held]);
    // Times are UTC, as the form says; the time filter keeps the other filters.
    const past = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);
    const future = new Date(Date.now() + 3_600_000).toISOString().slice(0, 16);
    expect((await shown(`agent=reader-bot&since=${past}`)).ids).toHaveLength(2);
    expect((await shown(`agent=reader-bot&until=${past}`)).ids).toEqual([]);
    await expect(page.locator('main').textContent()).resolves.toContain(
      'No calls match these filters.',
    );
    expect((await shown(`since=${future}`)).ids).toEqual([]);
    // The form shows the filters it was given, and Filter sends them.
    await page.goto(`${world.base}/calls`);
    await page.getByLabel('Agent').fill('writer-bot');
    await page.getByLabel('Decision').selectOption('allowed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/agent=writer-bot/);
    expect(await listedIds(page)).toEqual([events.approvedRun]);
    await expect(page.getByLabel('Agent').inputValue()).resolves.toBe('writer-bot');

    const bad = await shown('since=yesterday&decision=maybe');
    expect(bad.status).toBe(400);
    const alert = await page.getByRole('alert').textContent();
    expect(alert).toContain('since:');
    expect(alert).toContain('decision:');
    expect((await shown(`since=${future}&until=${past}`)).status).toBe(400);
    expect((await shown('cursor=not-a-cursor')).status).toBe(400);
    await context.close();
  });

  it('pages through the log by keyset, keeping the filters, as the API pages it', async () => {
    const { page, context } = await world.signedInContext('alice@example.com');
    await page.goto(`${world.base}/calls?agent=paging-bot`);
    const first = await listedIds(page);
    expect(first).toHaveLength(50);
    await expect(page.getByRole('link', { name: 'Newest' }).count()).resolves.toBe(0);
    await page.getByRole('link', { name: 'Older calls' }).click();
    await page.waitForURL(/cursor=/);
    expect(new URL(page.url()).searchParams.get('agent')).toBe('paging-bot');
    const second = await listedIds(page);
    expect(second).toHaveLength(PAGED - 50);
    await expect(page.getByRole('link', { name: 'Older calls' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: 'Newest' }).count()).resolves.toBe(1);
    const all = [...first, ...second];
    expect(new Set(all).size).toBe(PAGED);
    expect(all).toEqual([...all].sort().reverse());
    // The whole log's first page is the API's first page.
    await page.goto(`${world.base}/calls`);
    expect(await listedIds(page)).toEqual(await apiListedIds('limit=50'));
    await context.close();
  });

  it('shows a held call’s event in full: its approval and decisions, trace and Temporal UI links', async () => {
    const { stack } = world;
    const [approval] = await stack.db.sql<{ id: string; workflowId: string }[]>`
      select a.id, a.workflow_id from approvals a join audit_events e on e.approval_id = a.id
      where e.id = ${events.held}`;
    const [event] = await stack.db.sql<{ traceId: string; workflowRunId: string }[]>`
      select trace_id, workflow_run_id from audit_events where id = ${events.held}`;
    const api = await stack.request(stack.key, 'GET', `/v1/audit/${events.held}`);
    const alice = await world.signedInContext('alice@example.com', { width: 1280, height: 900 });
    for (const width of [1280, 390]) {
      await alice.page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await alice.page.goto(`${world.base}/calls/${events.held}`);
      const main = alice.page.locator('main');
      await expect(alice.page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'acme.create_task',
      );
      const text = (await main.textContent()) ?? '';
      for (const fact of [events.held, 'blocked', 'writer-bot', USER, approval?.id ?? '?']) {
        expect(text).toContain(fact);
      }
      // The approval as the API shows it, with the decision the approver key made.
      const approvalPanel = alice.page.getByRole('region', { name: 'Approval', exact: true });
      await expect(approvalPanel.textContent()).resolves.toContain('approved');
      const decisions = alice.page.getByRole('table', { name: 'Decisions, oldest first' });
      await expect(decisions.locator('tbody tr').count()).resolves.toBe(1);
      await expect(decisions.textContent()).resolves.toContain('approver');
      // The request exactly as the API answers it.
      await expect(
        alice.page
          .getByRole('region', { name: 'Request', exact: true })
          .locator('pre')
          .textContent(),
      ).resolves.toBe(JSON.stringify(api.body.request, null, 2));
      await expect(
        alice.page.getByRole('link', { name: 'Open the trace' }).getAttribute('href'),
      ).resolves.toBe(`https://traces.example.com/trace/${event?.traceId ?? ''}?from=gatehouse`);
      await expect(
        alice.page.getByRole('link', { name: 'Open in the Temporal UI' }).getAttribute('href'),
      ).resolves.toBe(
        `${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent(approval?.workflowId ?? '')}/${event?.workflowRunId ?? ''}/history`,
      );
      expect(await fitsWidth(alice.page)).toBe(true);
      await alice.page.screenshot({
        path: `${SCREENSHOTS}console-call-event-${String(width)}.png`,
        fullPage: true,
      });
    }
    await alice.context.close();
  });

  it('names the workflow of a call that was never held, from Temporal, and none for a refused call', async () => {
    const { page, context } = await world.signedInContext('alice@example.com');
    const [row] = await world.stack.db.sql<{ workflowRunId: string }[]>`
      select workflow_run_id from audit_events where id = ${events.read}`;
    const runId = row?.workflowRunId ?? '';
    // Temporal's visibility lists a run a moment after it closed: the page asks it each time.
    const workflowId = await eventually('the read call’s workflow named on its page', async () => {
      await page.goto(`${world.base}/calls/${events.read}`);
      const shown = await page
        .getByRole('region', { name: 'Trace and workflow', exact: true })
        .textContent();
      return /call\/test\/acme\.list_tasks\/[0-9a-f]{32}/.exec(shown ?? '')?.[0];
    });
    await expect(
      page.getByRole('link', { name: 'Open in the Temporal UI' }).getAttribute('href'),
    ).resolves.toBe(
      `${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${runId}/history`,
    );
    await expect(page.getByRole('region', { name: 'Approval', exact: true }).count()).resolves.toBe(
      0,
    );

    await page.goto(`${world.base}/calls/${events.refused}`);
    await expect(
      page.getByRole('region', { name: 'Trace and workflow', exact: true }).textContent(),
    ).resolves.toContain('no workflow ran for this event');
    await expect(
      page.getByRole('region', { name: 'Response', exact: true }).textContent(),
    ).resolves.toContain('did not reach the app');

    for (const missing of [uuidv7(), 'not-an-id']) {
      const answer = await page.goto(`${world.base}/calls/${missing}`);
      expect(answer?.status()).toBe(404);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'No such event',
      );
    }
    await context.close();
  });

  it('keeps the pages to signed-in people of the environment', async () => {
    const anonymous = await fetch(`${world.base}/calls`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toContain('/console/test/sign-in');
    // An API key means nothing to the console.
    const keyed = await fetch(`${world.base}/calls/${events.read}`, {
      redirect: 'manual',
      headers: { authorization: `Bearer ${world.stack.key.key}` },
    });
    expect(keyed.status).toBe(303);
    // "Check again" is a form: without the session's token it is refused.
    const jar = await world.signIn('alice@example.com');
    const forged = await world.fetchAs(jar, `${world.base}/calls/integrity-check`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(world.base).origin,
      },
      body: 'csrf=forged',
    });
    expect(forged.status).toBe(403);
  });

  // Last: it leaves the trail tampered with.
  it('says the trail does not verify once a sealed event was edited, when asked to check again', async () => {
    const { sql } = world.stack.db;
    await sql`update audit_events set reason = 'nothing to see here' where id = ${events.read}`;
    const { page, context } = await world.signedInContext('olivia@example.com');
    await page.goto(`${world.base}/calls`);
    // The result kept from the first look, until someone asks again.
    const integrity = page.getByRole('region', { name: 'Audit trail integrity', exact: true });
    await page.getByRole('button', { name: 'Check again' }).click();
    await page.waitForURL(`${world.base}/calls`);
    // A check that outlasts the page's short wait shows on a later look.
    const finished = await eventually('the new check’s result', async () => {
      const text = (await integrity.textContent()) ?? '';
      if (!text.includes('running')) return text;
      await page.reload();
      return null;
    });
    expect(finished).not.toContain('Intact');
    await expect(integrity.locator('.badge').first().textContent()).resolves.toBe(
      'Does not verify',
    );
    await expect(integrity.textContent()).resolves.toContain(
      `event ${events.read}: its content does not match its hash`,
    );
    await context.close();
  });
});
