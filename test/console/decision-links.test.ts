import { beforeAll, describe, expect, it } from '@jest/globals';
import { decisionLinks } from '../../activities/approvals/decision-links.js';
import { formToken } from '../../activities/approvals/form-token.js';
import {
  markNoticeFailed,
  markNoticeSent,
  planNotices,
} from '../../activities/db/approval-notifications.js';
import { findApproval } from '../../activities/db/approvals.js';
import { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { approvalIdOf } from '../approvals/approval-stack.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let world: ConsoleStack;
let agent: TestKey;
const started = stopsAfterAll();
const USER = 'u_links';

beforeAll(async () => {
  world = started.add(await startConsoleStack());
  const { stack } = world;
  await stack.connect(USER);
  agent = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'links-bot',
  });
  const policy = await stack.request(stack.key, 'PUT', '/v1/policies/links', {
    body: {
      name: 'Alice and someone from finance',
      agents: ['links-bot'],
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      approval: {
        requested_from: ['person:alice@example.com', 'group:finance'],
        quorum: 2,
        ttl_seconds: 3600,
      },
    },
  });
  expect(policy.status).toBe(200);
}, 600_000);

/** A held write and its decision links (as an operator's CLI makes them), by addressee. */
async function heldWithLinks(
  title: string,
): Promise<{ id: string; links: Record<string, string> }> {
  const { stack } = world;
  const id = approvalIdOf(
    await stack.run('acme.create_task', { user: USER, input: { title } }, { key: agent }),
  );
  const approval = await findApproval(stack.db.sql, stack.environmentId, id);
  if (!approval) throw new Error('no approval');
  const made = await decisionLinks(stack.db.sql, stack.config, approval, {
    channel: 'cli',
    keyAgentId: null,
  });
  return { id, links: Object.fromEntries(made.map((link) => [link.approver, link.url])) };
}

/** The link page as this browser sees it, and its decision posted as the page posts it. */
async function openLink(jar: CookieJar, url: string) {
  const res = await world.fetchAs(jar, url);
  return { status: res.status, text: await res.text() };
}
async function decide(jar: CookieJar, url: string, decision: 'approve' | 'reject') {
  const token = url.slice(url.lastIndexOf('/') + 1);
  const res = await world.fetchAs(jar, url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(url).origin,
    },
    body: new URLSearchParams({
      csrf: formToken(world.stack.config.encryption, token),
      decision,
    }).toString(),
  });
  return { status: res.status, text: await res.text() };
}

async function approvalView(id: string) {
  return (await world.stack.request(world.stack.key, 'GET', `/v1/approvals/${id}`)).body;
}

describe('decision links and the people signed in', () => {
  it('refuses a link to a signed-in person it was not sent to, and records nothing', async () => {
    const { id, links } = await heldWithLinks('a link sent to Alice, opened by Bob');
    const aliceLink = links['person:alice@example.com'] ?? '';
    const bob = await world.signIn('bob@example.com');
    const page = await openLink(bob, aliceLink);
    expect(page.status).toBe(403);
    expect(page.text).toContain('a link decides only for the person it was sent to');
    expect(page.text).not.toContain('value="approve"');
    const posted = await decide(bob, aliceLink, 'approve');
    expect(posted.status).toBe(403);
    expect(await approvalView(id)).toMatchObject({ status: 'pending', decisions: [] });
  });

  it('records a signed-in person deciding through their own link as that person', async () => {
    const { id, links } = await heldWithLinks('Alice decides through her link');
    const aliceLink = links['person:alice@example.com'] ?? '';
    const alice = await world.signIn('alice@example.com');
    const page = await openLink(alice, aliceLink);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Alice Approver (alice@example.com)');
    expect((await decide(alice, aliceLink, 'approve')).status).toBe(200);
    expect(await approvalView(id)).toMatchObject({
      status: 'pending',
      approvals_needed: 1,
      decisions: [
        {
          by: 'person:alice@example.com',
          via: 'link',
          name: 'Alice Approver',
          issuer: world.idp.issuer,
          subject: 'dev-alice',
        },
      ],
    });

    // Bob, of finance, uses the group's link signed in: he is recorded, and the quorum is met.
    const bob = await world.signIn('bob@example.com');
    expect((await decide(bob, links['group:finance'] ?? '', 'approve')).status).toBe(200);
    expect(await approvalView(id)).toMatchObject({
      status: 'approved',
      decided_by: 'person:bob@example.com',
      decisions: [
        { by: 'person:alice@example.com' },
        { by: 'person:bob@example.com', via: 'link' },
      ],
    });
  });

  it('lets a link decide for its addressee when nobody is signed in, never twice for one person', async () => {
    const { id, links } = await heldWithLinks('links without a session');
    const aliceLink = links['person:alice@example.com'] ?? '';
    const alice = await world.signIn('alice@example.com');
    const review = await world.fetchAs(alice, `${world.base}/inbox/${id}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await review.text())?.[1] ?? '';
    const inConsole = await world.fetchAs(alice, `${world.base}/inbox/${id}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(world.base).origin,
      },
      body: new URLSearchParams({ csrf, decision: 'approve' }).toString(),
    });
    expect(inConsole.status).toBe(200);
    // Her own link, in a browser with no session: it is still Alice, who has decided.
    const anonymous = new CookieJar();
    const again = await decide(anonymous, aliceLink, 'approve');
    expect(again.status).toBe(403);
    expect(await approvalView(id)).toMatchObject({ status: 'pending', approvals_needed: 1 });
    // The finance link without a session decides as the group's addressee.
    expect((await decide(anonymous, links['group:finance'] ?? '', 'approve')).status).toBe(200);
    expect(await approvalView(id)).toMatchObject({
      status: 'approved',
      decisions: [
        { by: 'person:alice@example.com', via: 'console' },
        { by: 'group:finance (decision link)', via: 'link' },
      ],
    });
  });
});

describe('the review page says who was told', () => {
  it('lists each message with how it went, the relay’s words on a failure, escaped', async () => {
    const { id } = await heldWithLinks('told on the review page');
    const alice = await world.signIn('alice@example.com');
    const before = await (await world.fetchAs(alice, `${world.base}/inbox/${id}`)).text();
    expect(before).toContain('Who was told');
    expect(before).toContain('No message was sent');

    // As the sending activities record them: one sent, one failing with the relay's words.
    const { sql } = world.stack.db;
    await planNotices(sql, world.stack.environmentId, id, 'requested', [
      {
        targetKey: 'k-sent',
        channel: 'email',
        addressee: 'person:alice@example.com',
        shownTo: 'alice@example.com',
      },
      {
        targetKey: 'k-failing',
        channel: 'slack',
        addressee: 'group:finance',
        shownTo: '#C0FINANCE',
      },
    ]);
    await markNoticeSent(sql, id, 'requested', 'k-sent');
    await markNoticeFailed(
      sql,
      id,
      'requested',
      'k-failing',
      'retrying',
      'Slack refused the post: <not_in_channel>',
    );
    const after = await (await world.fetchAs(alice, `${world.base}/inbox/${id}`)).text();
    expect(after).toMatch(/E-mail to <strong>alice@example.com<\/strong>\s*:\s*sent at/);
    expect(after).toMatch(/Slack to <strong>#C0FINANCE<\/strong>\s*:\s*retrying/);
    expect(after).toContain('Slack refused the post: &lt;not_in_channel&gt;');
  });
});
