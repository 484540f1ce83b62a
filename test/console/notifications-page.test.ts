// The console's Notifications section on the real stack: a signed-in person sees where they are
// told of the held calls that ask them (what is addressed to them alone, the shared places, and
// which approvals send each), and opts out of a channel and back in, in headless Chromium; each
// change is theirs alone, an audit event of the person, and what the senders read follows it.
// Refused: a form without its token or from another origin, a kind with nothing to opt out of,
// and any attempt to opt someone else out.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { setNotificationChannel } from '../../activities/db/notification-channels.js';
import { replaceNotificationRoutes } from '../../activities/db/notification-routes.js';
import { listNotificationOptOuts } from '../../activities/db/notification-opt-outs.js';
import { notificationTargets } from '../../activities/notifications/notification-targets.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import { stopsAfterAll } from '../support/stops.js';
import {
  DESKTOP,
  PHONE,
  formTokenOf,
  overflowOf,
  pageAs,
  photograph,
  postAs,
  screenshotsFolder,
} from './page-forms.js';

let world: ConsoleStack;
const started = stopsAfterAll();
const admin = { label: 'admin', keyAgentId: 'admin' };

beforeAll(async () => {
  world = started.add(await startConsoleStack());
  const { sql, environmentId } = {
    sql: world.stack.db.sql,
    environmentId: world.stack.environmentId,
  };
  const keyring = world.stack.config.encryption;
  await setNotificationChannel(
    sql,
    keyring,
    environmentId,
    {
      kind: 'email',
      host: '127.0.0.1',
      port: 25,
      security: 'none',
      username: null,
      password: null,
      senderAddress: 'approvals@example.com',
      senderName: null,
    },
    admin,
  );
  await setNotificationChannel(
    sql,
    keyring,
    environmentId,
    {
      kind: 'slack',
      botToken: 'xoxb-1-2-x',
      signingSecret: 'b'.repeat(32),
      apiBaseUrl: 'https://slack.com/api/',
    },
    admin,
  );
  await setNotificationChannel(sql, keyring, environmentId, { kind: 'teams' }, admin);
  const route = (
    audience: string,
    kind: 'email' | 'slack' | 'teams',
    targets: Parameters<typeof replaceNotificationRoutes>[5],
  ) => replaceNotificationRoutes(sql, keyring, environmentId, audience, kind, targets, admin);
  await route('group:approvers', 'email', [{ type: 'each_person' }]);
  await route('*', 'slack', [{ type: 'each_person' }]);
  await route('group:approvers', 'slack', [{ type: 'slack_channel', channel: 'C0APPROVERS' }]);
  await route('group:finance', 'teams', [
    { type: 'webhook', url: 'https://prod-3.westeurope.logic.azure.com/workflows/f?sig=NotShown' },
  ]);
  await screenshotsFolder();
}, 600_000);

/** Whom an approval asking the approvers group would e-mail now. */
async function approverEmails(): Promise<string[]> {
  const targets = await notificationTargets(world.stack.db.sql, world.stack.environmentId, {
    id: 'a0000000-0000-7000-8000-0000000000aa',
    requested_from: ['group:approvers'],
  });
  return targets.flatMap((target) =>
    target.channel === 'email' && target.to.email ? [target.to.email] : [],
  );
}

async function consoleChanges() {
  return world.stack.db.sql<
    { action: string; agentId: string; via: string; request: Record<string, unknown> }[]
  >`
    select action, agent_id, via, request from audit_events
    where environment_id = ${world.stack.environmentId} and action like 'console.notifications.%'
    order by seq`;
}

describe('the Notifications section', () => {
  it('shows a person where they are told, and lets them opt out of e-mail and back in', async () => {
    // Nobody has signed in yet: the approvers group has no member Gatehouse knows.
    expect(await approverEmails()).toEqual([]);
    const { context, page } = await world.signedInContext('alice@example.com', DESKTOP);
    expect(await approverEmails()).toEqual(['alice@example.com']);
    await page.getByRole('link', { name: 'Notifications', exact: true }).click();
    await page.waitForURL(/\/console\/test\/notifications$/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Notifications',
    );
    const email = page.getByRole('region', { name: /E-mail/ });
    await expect(email.textContent()).resolves.toMatch(
      /alice@example\.com, when an approval asks group approvers or any approver/,
    );
    await expect(email.getByText('reaches you').count()).resolves.toBe(1);
    const slack = page.getByRole('region', { name: /Slack/ });
    // A direct message, asked by name, through any of her groups or as any approver…
    await expect(slack.textContent()).resolves.toContain(
      'a Slack direct message to alice@example.com, when an approval asks you by name, group approvers or any approver',
    );
    // …and the approvers' channel, shared.
    await expect(slack.textContent()).resolves.toMatch(
      /Slack channel C0APPROVERS, when an approval asks group approvers or any approver/,
    );
    // Teams reaches finance; Alice is not in it, and nobody opts out of Teams.
    const teams = page.getByRole('region', { name: /Microsoft Teams/ });
    await expect(teams.textContent()).resolves.toContain('Nothing is addressed to you alone');
    await expect(teams.getByRole('button').count()).resolves.toBe(0);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      expect(await overflowOf(page)).toBe(0);
      await photograph(page, 'notifications');
    }
    await page.setViewportSize(DESKTOP);

    await email.getByRole('button', { name: 'Opt out of E-mail' }).click();
    await page.waitForURL(/notifications\?out=email$/);
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'You opted out of E-mail.',
    );
    await expect(
      page
        .getByRole('region', { name: /E-mail/ })
        .getByText('opted out', { exact: true })
        .count(),
    ).resolves.toBe(1);
    expect(await approverEmails()).toEqual([]);
    expect(
      (await listNotificationOptOuts(world.stack.db.sql, world.stack.environmentId)).map((o) => [
        o.email,
        o.kind,
        o.createdBy,
      ]),
    ).toEqual([['alice@example.com', 'email', 'person:alice@example.com']]);

    await page.getByRole('button', { name: 'Opt back in to E-mail' }).click();
    await page.waitForURL(/notifications\?in=email$/);
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'You opted back in to E-mail.',
    );
    expect(await approverEmails()).toEqual(['alice@example.com']);
    await context.close();

    const changes = await consoleChanges();
    expect(
      changes.map((change) => [change.action, change.agentId, change.via, change.request.kind]),
    ).toEqual([
      ['console.notifications.opt_out', 'person:alice@example.com', 'console', 'email'],
      ['console.notifications.opt_in', 'person:alice@example.com', 'console', 'email'],
    ]);
    expect(changes[0]?.request).toMatchObject({
      person: { email: 'alice@example.com', name: expect.any(String) },
      email: 'alice@example.com',
    });
  });

  it('shows another person what reaches them: Bob, in finance, the finance Teams channel by its host', async () => {
    const bob = await world.signIn('bob@example.com');
    const { status, html } = await pageAs(world, bob, '/notifications');
    expect(status).toBe(200);
    expect(html).toContain('a Teams channel, through prod-3.westeurope.logic.azure.com');
    expect(html).not.toContain('NotShown');
    // Not in the approvers group: no e-mail to him, no approvers' channel.
    expect(html).not.toContain('C0APPROVERS');
    expect(html).not.toContain('alice@example.com');
  });

  it('changes only the signed-in person’s own opt-outs, and only from the console’s own forms', async () => {
    const alice = await world.signIn('alice@example.com');
    const { html } = await pageAs(world, alice, '/notifications');
    const csrf = formTokenOf(html);
    const before = (await consoleChanges()).length;

    // No token, another origin, another session's token: refused, nothing changed.
    expect(
      (await postAs(world, alice, '/notifications', { kind: 'email', choice: 'out' })).status,
    ).toBe(403);
    const crossSite = await world.fetchAs(alice, `${world.base}/notifications`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
      },
      body: new URLSearchParams({ csrf, kind: 'email', choice: 'out' }).toString(),
    });
    expect(crossSite.status).toBe(403);
    const bob = await world.signIn('bob@example.com');
    const bobToken = formTokenOf((await pageAs(world, bob, '/notifications')).html);
    expect(
      (
        await postAs(world, alice, '/notifications', {
          csrf: bobToken,
          kind: 'email',
          choice: 'out',
        })
      ).status,
    ).toBe(403);
    // Nothing to opt out of in Teams, and a form that does not read.
    expect(
      (await postAs(world, alice, '/notifications', { csrf, kind: 'teams', choice: 'out' })).status,
    ).toBe(400);
    expect(
      (await postAs(world, alice, '/notifications', { csrf, kind: 'email', choice: 'maybe' }))
        .status,
    ).toBe(400);

    // A field naming someone else is not read: the opt-out is the session's person's.
    const own = await postAs(world, alice, '/notifications', {
      csrf,
      kind: 'slack',
      choice: 'out',
      email: 'bob@example.com',
    });
    expect(own.status).toBe(303);
    expect(own.location).toMatch(/\/console\/test\/notifications\?out=slack$/);
    expect(
      (await listNotificationOptOuts(world.stack.db.sql, world.stack.environmentId)).map((o) => [
        o.email,
        o.kind,
      ]),
    ).toEqual([['alice@example.com', 'slack']]);
    // Twice: nothing more recorded.
    await postAs(world, alice, '/notifications', { csrf, kind: 'slack', choice: 'out' });
    expect((await consoleChanges()).length).toBe(before + 1);
    await postAs(world, alice, '/notifications', { csrf, kind: 'slack', choice: 'in' });
    expect(await listNotificationOptOuts(world.stack.db.sql, world.stack.environmentId)).toEqual(
      [],
    );
    expect((await consoleChanges()).length).toBe(before + 2);
  });
});
