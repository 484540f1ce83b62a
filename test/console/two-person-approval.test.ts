import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { createTestKey, type TestKey } from '../support/keys.js';
import { approvalIdOf } from '../approvals/approval-stack.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/** Where the screenshots go (README, "Test it"). */
const SCREENSHOTS = fileURLToPath(new URL('../../screenshots/', import.meta.url));

let world: ConsoleStack;
let agent: TestKey;
const started = stopsAfterAll();
const USER = 'u_two_person';

beforeAll(async () => {
  world = started.add(await startConsoleStack());
  const { stack } = world;
  await stack.connect(USER);
  agent = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'cleanup-bot',
  });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/two-person', {
    body: {
      name: 'Deletes need two people',
      agents: ['cleanup-bot'],
      defaults: { read: 'allow', write: 'allow', destructive: 'ask' },
      approval: {
        requested_from: ['group:approvers', 'group:finance'],
        quorum: 2,
        ttl_seconds: 3600,
      },
    },
  });
  expect(policy.status).toBe(200);
  await mkdir(SCREENSHOTS, { recursive: true });
}, 600_000);

/** No sideways scrolling: the page fits the window it is shown in. */
async function fitsWidth(page: Page): Promise<boolean> {
  // A string, evaluated in the page: this program is compiled without the DOM's types.
  return (
    (await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')) === true
  );
}

async function newTask(title: string): Promise<string> {
  const created = await world.stack.run(
    'acme.create_task',
    { user: USER, input: { title } },
    { key: agent },
  );
  expect(created.status).toBe(200);
  return (created.body.data as { id: string }).id;
}

async function taskIds(): Promise<string[]> {
  const listed = await world.stack.run('acme.list_tasks', { user: USER }, { key: agent });
  return (listed.body.data as { tasks: { id: string }[] }).tasks.map((task) => task.id);
}

describe('a two-person approval in the console', () => {
  it('runs a held destructive call once, after two different people approved it in two browsers', async () => {
    const { stack } = world;
    const id = await newTask('two people must agree to delete this');
    const remove = () =>
      stack.run('acme.delete_task', { user: USER, input: { id } }, { key: agent });
    const approvalId = approvalIdOf(await remove());

    // Alice (approvers) at a desktop width: her inbox shows the held call; she approves.
    const alice = await world.signedInContext('alice@example.com', { width: 1280, height: 900 });
    await alice.page.goto(`${world.base}/inbox`);
    const row = alice.page.getByRole('link', { name: 'acme.delete_task' });
    await expect(row.count()).resolves.toBe(1);
    await alice.page.screenshot({ path: `${SCREENSHOTS}console-inbox-1280.png`, fullPage: true });
    await row.click();
    await expect(alice.page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'acme.delete_task',
    );
    await expect(alice.page.locator('main').textContent()).resolves.toContain(
      '2 different people must approve',
    );
    await alice.page.screenshot({ path: `${SCREENSHOTS}console-review-1280.png`, fullPage: true });
    await alice.page.getByRole('button', { name: 'Approve' }).click();
    await expect(alice.page.getByRole('status').textContent()).resolves.toContain(
      '1 more approval is needed',
    );
    expect(await fitsWidth(alice.page)).toBe(true);

    // Still pending after one approval: the call has not run, and the tally says so.
    const half = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
    expect(half.body).toMatchObject({ status: 'pending', quorum: 2, approvals_needed: 1 });
    expect(await remove()).toMatchObject({ status: 403 });
    expect(await taskIds()).toContain(id);

    // Alice cannot count twice: the page offers her no buttons, and a POST of her own is refused.
    await alice.page.reload();
    await expect(alice.page.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    await expect(alice.page.getByRole('alert').textContent()).resolves.toContain(
      'You cannot decide this approval',
    );
    const csrf = await alice.page.locator('input[name="csrf"]').first().inputValue();
    const again = await alice.page.request.post(`${world.base}/inbox/${approvalId}`, {
      form: { csrf, decision: 'approve' },
      headers: { origin: new URL(world.base).origin },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(403);
    expect(
      (await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`)).body,
    ).toMatchObject({ status: 'pending', approvals_needed: 1 });

    // Bob (finance), on a phone, in a browser of his own: his approval is the second.
    const bob = await world.signedInContext('bob@example.com', { width: 390, height: 844 });
    await bob.page.goto(`${world.base}/inbox`);
    expect(await fitsWidth(bob.page)).toBe(true);
    await bob.page.screenshot({ path: `${SCREENSHOTS}console-inbox-390.png`, fullPage: true });
    await bob.page.getByRole('link', { name: 'acme.delete_task' }).click();
    expect(await fitsWidth(bob.page)).toBe(true);
    await bob.page.screenshot({ path: `${SCREENSHOTS}console-review-390.png`, fullPage: true });
    await bob.page.getByRole('button', { name: 'Approve' }).click();
    await expect(bob.page.getByRole('status').textContent()).resolves.toContain('Approved');

    const decided = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
    expect(decided.body).toMatchObject({
      status: 'approved',
      approvals_needed: 0,
      decided_by: 'person:bob@example.com',
      decisions: [
        {
          by: 'person:alice@example.com',
          decision: 'approve',
          via: 'console',
          name: 'Alice Approver',
          issuer: world.idp.issuer,
          subject: 'dev-alice',
        },
        {
          by: 'person:bob@example.com',
          decision: 'approve',
          via: 'console',
          name: 'Bob Finance',
          issuer: world.idp.issuer,
          subject: 'dev-bob',
        },
      ],
    });

    // The retry runs the delete once; the next identical call is asked anew, not run again.
    const ran = await remove();
    expect(ran.status).toBe(200);
    expect(await taskIds()).not.toContain(id);
    const after = await remove();
    expect(after.status).not.toBe(200);
    const rows = await stack.db.sql<{ id: string; reason: string | null }[]>`
      select id, reason from audit_events
      where approval_id = ${approvalId} and decision = 'allowed'`;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.reason).toContain('person:alice@example.com');
    expect(rows[0]?.reason).toContain('person:bob@example.com');

    // The audit event shows the approval with both people, issuer, subject and name.
    const event = await stack.request(stack.key, 'GET', `/v1/audit/${rows[0]?.id ?? ''}`);
    expect(event.body).toMatchObject({
      approval: {
        id: approvalId,
        decisions: [{ name: 'Alice Approver' }, { name: 'Bob Finance' }],
      },
    });
    // Each console decision is an audit event of its own, by the person.
    const consoleEvents = await stack.db.sql<{ agentId: string }[]>`
      select agent_id from audit_events
      where action = 'console.approvals.decide' and request ->> 'approval_id' = ${approvalId}
      order by seq`;
    expect(consoleEvents.map((row) => row.agentId)).toEqual([
      'person:alice@example.com',
      'person:bob@example.com',
    ]);
    // Alice signs out with the header's button. The provider still remembers her, but the next
    // sign-in from her browser asks for her password again: it stops at the provider's form.
    await alice.page.goto(`${world.base}/inbox`);
    await alice.page.getByRole('button', { name: 'Sign out' }).click();
    await expect(alice.page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'You are signed out',
    );
    await alice.page.goto(`${world.base}/inbox`);
    expect(new URL(alice.page.url()).origin).toBe(new URL(world.idp.issuer).origin);
    await expect(alice.page.getByLabel('Password').count()).resolves.toBe(1);
    await alice.context.close();
    await bob.context.close();
  });

  it('rejects at the first rejection, and nothing runs', async () => {
    const { stack } = world;
    const id = await newTask('one rejection is enough');
    const remove = () =>
      stack.run('acme.delete_task', { user: USER, input: { id } }, { key: agent });
    const approvalId = approvalIdOf(await remove());
    const alice = await world.signedInContext('alice@example.com');
    await alice.page.goto(`${world.base}/inbox/${approvalId}`);
    await alice.page.getByRole('button', { name: 'Reject' }).click();
    await expect(alice.page.getByRole('status').textContent()).resolves.toContain('Rejected');
    expect(
      (await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`)).body,
    ).toMatchObject({ status: 'rejected', decided_by: 'person:alice@example.com' });
    expect((await remove()).status).toBe(403);
    expect(await taskIds()).toContain(id);
    await alice.context.close();
  });

  it('shows a person outside the asked groups the call, and no buttons', async () => {
    const { stack } = world;
    const id = await newTask('asked of approvers and finance only');
    const approvalId = approvalIdOf(
      await stack.run('acme.delete_task', { user: USER, input: { id } }, { key: agent }),
    );
    // Olivia administers; give her group the approver role too, and she is still not asked.
    await world.stack.db.sql`
      insert into role_mappings (environment_id, group_name, role)
      values (${stack.environmentId}, 'operators', 'approver')`;
    try {
      const olivia = await world.signedInContext('olivia@example.com');
      await olivia.page.goto(`${world.base}/inbox`);
      await expect(
        olivia.page.getByRole('link', { name: 'acme.delete_task' }).count(),
      ).resolves.toBe(0);
      await olivia.page.goto(`${world.base}/inbox/${approvalId}`);
      await expect(olivia.page.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
      await expect(olivia.page.getByRole('alert').textContent()).resolves.toContain('not among');
      await olivia.context.close();
    } finally {
      await world.stack.db.sql`
        delete from role_mappings
        where environment_id = ${stack.environmentId} and group_name = 'operators'
          and role = 'approver'`;
    }
  });
});
