// The console's policies and grants: an operator edits a policy, reads what the candidate would
// change on the recorded calls (the API's simulation), and saves exactly the version simulated;
// revokes a grant; and neither an approver nor a form from elsewhere changes anything. Real
// stack, real sign-in (the dev provider), real Chromium.
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import type { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { agentKey, approveWithGrant, createTask, setGrantPolicy } from '../grants/grant-stack.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import type { TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';
import {
  DESKTOP,
  PHONE,
  formTokenOf,
  hiddenFieldsOf,
  overflowOf,
  pageAs,
  photograph,
  postAs,
  screenshotsFolder,
} from './page-forms.js';

let world: ConsoleStack;
let agent: TestKey;
let olivia: { context: BrowserContext; page: Page };
let oliviaJar: CookieJar;
let aliceJar: CookieJar;

const USER = 'u_policies';
/** Users of their own for grants that must not let the others' calls through. */
const READER_USER = 'u_policies_reader';
const TOKEN_USER = 'u_policies_token';
/** The policy under test (test/grants/grant-stack.ts): agent granted-bot, writes ask, grants ≤ 1 h. */
const POLICY = 'granted';

const started = stopsAfterAll();

beforeAll(async () => {
  world = started.add(await startConsoleStack());
  const { stack } = world;
  for (const user of [USER, READER_USER, TOKEN_USER]) await stack.connect(user);
  // One rule with a condition, so the pages show a rule; no recorded call meets it.
  await setGrantPolicy(stack, 3600, [
    { app: 'acme', scope: 'destructive', when: 'user == "u_nobody"', decision: 'ask' },
  ]);
  agent = await agentKey(stack);
  // Recorded calls for the simulation to replay: two reads (allowed), one write (held).
  for (let i = 0; i < 2; i++) {
    expect((await stack.run('acme.list_tasks', { user: USER }, { key: agent })).status).toBe(200);
  }
  expect((await createTask(stack, agent, USER)).status).toBe(403);
  await screenshotsFolder();
  olivia = await world.signedInContext('olivia@example.com', DESKTOP);
  started.push(() => olivia.context.close());
  oliviaJar = await world.signIn('olivia@example.com');
  aliceJar = await world.signIn('alice@example.com');
}, 600_000);

interface PolicyOut {
  version: number;
  defaults: Record<string, string>;
  rules: unknown[];
  approval: Record<string, unknown>;
  updated_by: string;
}

async function policyNow(): Promise<PolicyOut> {
  const answer = await world.stack.request(world.stack.key, 'GET', `/v1/policies/${POLICY}`);
  expect(answer.status).toBe(200);
  return answer.body as unknown as PolicyOut;
}

/** The edit form's text as the console fills it, changed by `change`. */
async function candidateText(
  jar: CookieJar,
  change: (policy: Record<string, unknown>) => void,
): Promise<{ text: string; csrf: string }> {
  const edit = await pageAs(world, jar, `/policies/${POLICY}/edit`);
  expect(edit.status).toBe(200);
  const shown = /<textarea[^>]*>\n?([\s\S]*?)<\/textarea>/.exec(edit.html)?.[1] ?? '';
  const policy = JSON.parse(
    shown
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  ) as Record<string, unknown>;
  change(policy);
  return { text: JSON.stringify(policy, null, 2), csrf: formTokenOf(edit.html) };
}

const withDefaults =
  (defaults: Record<string, string>) =>
  (policy: Record<string, unknown>): void => {
    policy.defaults = { ...(policy.defaults as object), ...defaults };
  };

describe('editing a policy in the console', () => {
  it('simulates the candidate on the recorded calls, shows what would be decided differently, and saves exactly that version', async () => {
    const before = await policyNow();
    const { page } = olivia;
    await page.goto(`${world.base}/policies`);
    await photograph(page, 'policies');
    await page.getByRole('link', { name: 'Grants under test' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'Grants under test',
    );
    await photograph(page, 'policy');
    await page.getByRole('link', { name: 'Edit and simulate' }).click();

    // Reads are to ask from now on: the two recorded reads would be held.
    const field = page.getByLabel(/The policy as JSON/);
    const policy = JSON.parse(await field.inputValue()) as Record<string, unknown>;
    withDefaults({ read: 'ask' })(policy);
    await field.fill(JSON.stringify(policy, null, 2));
    await photograph(page, 'policy-edit');
    await page.getByRole('button', { name: 'Simulate' }).click();

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'What your version of Grants under test would change',
    );
    const change = page.getByRole('region', { name: 'allow to ask' });
    await expect(change.getByRole('heading').textContent()).resolves.toMatch(
      /allow → ask:\s+2\s+calls/,
    );
    // The examples are the two recorded reads, by their audit ids.
    const reads = await world.stack.db.sql<{ id: string }[]>`
      select id from audit_events
      where action = 'acme.list_tasks' and agent_id = 'granted-bot' order by id desc`;
    expect(reads).toHaveLength(2);
    await expect(change.getByRole('listitem').allInnerTexts()).resolves.toEqual(
      reads.map(({ id }) =>
        expect.stringMatching(
          new RegExp(`^acme\\.list_tasks by granted-bot for u_policies, .+ UTC \\(audit ${id}\\)$`),
        ),
      ),
    );
    await expect(
      page.locator('pre[aria-label="Your version"] ins').allTextContents(),
    ).resolves.toEqual([expect.stringContaining('"read": "ask"')]);
    expect(await overflowOf(page)).toBe(0);
    await photograph(page, 'policy-simulation');
    expect((await policyNow()).version).toBe(before.version);

    await page.getByRole('button', { name: 'Save this version' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      `Version ${String(before.version + 1)} is saved`,
    );
    const after = await policyNow();
    expect(after).toMatchObject({
      version: before.version + 1,
      defaults: { read: 'ask', write: 'ask', destructive: 'deny' },
      rules: before.rules,
      approval: before.approval,
      updated_by: 'person:olivia@example.com',
    });
    const [saved] = await world.stack.db.sql<
      { agentId: string; via: string; request: Record<string, unknown> }[]
    >`
      select agent_id, via, request from audit_events
      where action = 'console.policies.save' and request ->> 'policy' = ${POLICY}
      order by seq desc limit 1`;
    expect(saved).toMatchObject({
      agentId: 'person:olivia@example.com',
      via: 'console',
      request: {
        version: after.version,
        previous_version: before.version,
        person: { email: 'olivia@example.com', subject: 'dev-olivia' },
        body: { defaults: { read: 'ask' } },
      },
    });
    // The new version governs: a read of the agent is held now.
    expect((await world.stack.run('acme.list_tasks', { user: USER }, { key: agent })).status).toBe(
      403,
    );
  });

  it('names what is wrong with a candidate, as the API would, and saves nothing', async () => {
    const before = await policyNow();
    const { text, csrf } = await candidateText(oliviaJar, (policy) => {
      policy.rules = [{ app: 'acme', when: 'input.amount >', decision: 'deny' }];
      policy.agents = ['granted-bot', 'granted-bot'];
      (policy.approval as Record<string, unknown>).ttl_seconds = 0;
    });
    const refused = await postAs(world, oliviaJar, `/policies/${POLICY}/simulate`, {
      csrf,
      candidate: text,
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('The candidate cannot be saved as it is');
    expect(refused.html).toMatch(/<code>rules\.0\.when<\/code>: line 1, column \d+/);
    expect(refused.html).toContain('<code>approval.ttl_seconds</code>');
    // The text comes back as it was sent, to be corrected.
    expect(refused.html).toContain('input.amount &gt;');

    const notJson = await postAs(world, oliviaJar, `/policies/${POLICY}/simulate`, {
      csrf,
      candidate: '{"defaults": {"read": "allow", "read": "deny"}}',
    });
    expect(notJson.status).toBe(400);
    expect(notJson.html).toContain('defaults.read</code>: is given twice in one object');
    expect((await policyNow()).version).toBe(before.version);
  });

  it('refuses a candidate that is not the one simulated, and a save after the policy moved on', async () => {
    const { text, csrf } = await candidateText(oliviaJar, withDefaults({ write: 'deny' }));
    const simulated = await postAs(world, oliviaJar, `/policies/${POLICY}/simulate`, {
      csrf,
      candidate: text,
    });
    expect(simulated.status).toBe(200);
    const save = hiddenFieldsOf(simulated.html, `/policies/${POLICY}/save`);
    expect(save.candidate).toBe(text);
    const before = await policyNow();

    // The same seal on another candidate: refused, nothing saved.
    const tampered = await postAs(world, oliviaJar, `/policies/${POLICY}/save`, {
      ...save,
      candidate: text.replace('"write": "deny"', '"write": "allow"'),
    });
    expect(tampered.status).toBe(400);
    expect(tampered.html).toContain('This is not the version you simulated');
    // Nor does a seal made for another base version fit.
    const rebased = await postAs(world, oliviaJar, `/policies/${POLICY}/save`, {
      ...save,
      based_on: String(before.version + 1),
    });
    expect(rebased.status).toBe(400);
    expect(rebased.html).toContain('This is not the version you simulated');
    // Nor does another session's: the seal is this session's own.
    const otherSession = await world.signIn('olivia@example.com');
    const foreign = await postAs(world, otherSession, `/policies/${POLICY}/save`, {
      ...save,
      csrf: formTokenOf((await pageAs(world, otherSession, '/policies')).html),
    });
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain('This is not the version you simulated');
    expect(await policyNow()).toMatchObject({ version: before.version, defaults: before.defaults });

    // Someone writes another version through the API after the simulation: the save is refused.
    const put = await world.stack.request(world.stack.key, 'PUT', `/v1/policies/${POLICY}`, {
      body: { defaults: { read: 'allow', write: 'ask', destructive: 'deny' } },
    });
    expect(put.status).toBe(200);
    const late = await postAs(world, oliviaJar, `/policies/${POLICY}/save`, save);
    expect(late.status).toBe(409);
    expect(late.html).toContain('The policy changed since you simulated');
    expect(await policyNow()).toMatchObject({
      version: before.version + 1,
      defaults: { write: 'ask' },
      updated_by: 'test-agent',
    });

    // Simulated again against the current version, the same candidate saves.
    const again = await postAs(world, oliviaJar, `/policies/${POLICY}/simulate`, {
      csrf,
      candidate: text,
    });
    const saved = await postAs(
      world,
      oliviaJar,
      `/policies/${POLICY}/save`,
      hiddenFieldsOf(again.html, `/policies/${POLICY}/save`),
    );
    expect(saved.status).toBe(303);
    expect(await policyNow()).toMatchObject({
      version: before.version + 2,
      defaults: { write: 'deny' },
      updated_by: 'person:olivia@example.com',
    });
    // Back to writes that ask, for the grant below.
    const reset = await world.stack.request(world.stack.key, 'PUT', `/v1/policies/${POLICY}`, {
      body: { defaults: { read: 'allow', write: 'ask', destructive: 'deny' } },
    });
    expect(reset.status).toBe(200);
  });
});

describe('grants in the console', () => {
  it('revokes a grant as the API does: the next call is asked again, and the person is recorded', async () => {
    const grant = await approveWithGrant(world.stack, agent, USER, { for: 'user', seconds: 3600 });
    // While the grant lives, the agent's writes run without asking.
    expect((await createTask(world.stack, agent, USER)).status).toBe(200);

    const { page } = olivia;
    await page.goto(`${world.base}/grants?status=active`);
    await photograph(page, 'grants');
    await page
      .getByRole('button', { name: `Revoke the grant of acme.create_task to granted-bot` })
      .click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The grant is revoked');
    expect(await overflowOf(page)).toBe(0);

    const listed = await world.stack.request(world.stack.key, 'GET', '/v1/grants?status=revoked');
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        id: grant.id,
        status: 'revoked',
        revoked_by: 'person:olivia@example.com',
      }),
    ]);
    expect((await createTask(world.stack, agent, USER)).status).toBe(403);
    const events = await world.stack.db.sql<
      { agentId: string; request: Record<string, unknown> }[]
    >`
      select agent_id, request from audit_events where action = 'console.grants.revoke'`;
    expect(events).toEqual([
      {
        agentId: 'person:olivia@example.com',
        request: expect.objectContaining({
          grant: grant.id,
          agent_id: 'granted-bot',
          grant_action: 'acme.create_task',
          person: expect.objectContaining({ email: 'olivia@example.com' }),
        }),
      },
    ]);
  });
});

describe('who may change policies and grants', () => {
  it('lets an approver read them, and refuses them every change (403)', async () => {
    const grant = await approveWithGrant(world.stack, agent, READER_USER, {
      for: 'user',
      seconds: 600,
    });
    const before = await policyNow();
    const shown = await pageAs(world, aliceJar, `/policies/${POLICY}`);
    expect(shown.status).toBe(200);
    expect(shown.html).not.toContain('Edit and simulate');
    const grants = await pageAs(world, aliceJar, '/grants');
    expect(grants.status).toBe(200);
    expect(grants.html).toContain('acme.create_task');
    expect(grants.html).not.toContain('/revoke"');
    expect((await pageAs(world, aliceJar, `/policies/${POLICY}/edit`)).status).toBe(403);

    // Her own form token, so only her role stands in the way.
    const csrf = formTokenOf(shown.html);
    const { text } = await candidateText(oliviaJar, withDefaults({ write: 'allow' }));
    for (const [path, fields] of [
      [`/policies/${POLICY}/simulate`, { csrf, candidate: text }],
      [`/policies/${POLICY}/save`, { csrf, candidate: text, based_on: '1', digest: 'x' }],
      [`/grants/${grant.id}/revoke`, { csrf }],
    ] as const) {
      const refused = await postAs(world, aliceJar, path, fields);
      expect({ path, status: refused.status }).toEqual({ path, status: 403 });
    }
    expect((await policyNow()).version).toBe(before.version);
    const active = await world.stack.request(world.stack.key, 'GET', '/v1/grants?status=active');
    expect((active.body.data as { id: string }[]).map((row) => row.id)).toContain(grant.id);
  });

  it('refuses a form posted without the session’s form token, even an operator’s', async () => {
    const grant = await approveWithGrant(world.stack, agent, TOKEN_USER, {
      for: 'user',
      seconds: 600,
    });
    const revoked = await postAs(world, oliviaJar, `/grants/${grant.id}/revoke`, {});
    expect(revoked.status).toBe(403);
    expect(revoked.html).toContain('That form was not sent from this console');
    const elsewhere = await world.fetchAs(oliviaJar, `${world.base}/grants/${grant.id}/revoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://elsewhere.example',
      },
      body: new URLSearchParams({
        csrf: formTokenOf((await pageAs(world, oliviaJar, '/grants')).html),
      }).toString(),
    });
    expect(elsewhere.status).toBe(403);
    const active = await world.stack.request(world.stack.key, 'GET', '/v1/grants?status=active');
    expect((active.body.data as { id: string }[]).map((row) => row.id)).toContain(grant.id);
  });
});

describe('at a phone’s width', () => {
  it('reads every page without sideways scrolling', async () => {
    const phone = await world.signedInContext('olivia@example.com', PHONE);
    try {
      const pages: [string, string][] = [
        ['/policies', 'policies'],
        [`/policies/${POLICY}`, 'policy'],
        [`/policies/${POLICY}/versions/2`, 'policy-version'],
        ['/grants', 'grants'],
        [`/policies/${POLICY}/edit`, 'policy-edit'],
      ];
      for (const [path, name] of pages) {
        await phone.page.goto(`${world.base}${path}`);
        expect({ path, overflow: await overflowOf(phone.page) }).toEqual({ path, overflow: 0 });
        await photograph(phone.page, name);
      }
      // Reads to be denied: the phone's simulation has changes to show.
      const field = phone.page.getByLabel(/The policy as JSON/);
      const policy = JSON.parse(await field.inputValue()) as Record<string, unknown>;
      withDefaults({ read: 'deny' })(policy);
      await field.fill(JSON.stringify(policy, null, 2));
      await phone.page.getByRole('button', { name: 'Simulate' }).click();
      await phone.page.getByRole('button', { name: 'Save this version' }).waitFor();
      expect(await overflowOf(phone.page)).toBe(0);
      await photograph(phone.page, 'policy-simulation');
      await olivia.page.goto(`${world.base}/policies/${POLICY}/versions/2`);
      expect(await overflowOf(olivia.page)).toBe(0);
      await photograph(olivia.page, 'policy-version');
    } finally {
      await phone.context.close();
    }
  });
});
