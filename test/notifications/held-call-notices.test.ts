import { beforeAll, describe, expect, it } from '@jest/globals';
import { APPROVAL_PAGE_PATH } from '../../activities/approvals/link-token.js';
import { upsertPerson } from '../../activities/db/people.js';
import { MAX_MESSAGES_PER_ROUND } from '../../activities/notifications/notice-activities.js';
import { eventually } from '../support/eventually.js';
import { ALICE, BOB, startNoticeStack, type NoticeStack } from '../support/notice-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A held call tells the people asked through its own workflow (README "Tell approvers where they
 * work"): the e-mail relay, Slack and Teams are real software on loopback (an SMTP server, the
 * Slack and Teams stand-ins), routes and channels are set through the management API, and what
 * each received is read back. Each message goes once per destination, the approval record says
 * what went where, and a decision made anywhere rewrites the Slack messages.
 */

let world: NoticeStack;

const started = stopsAfterAll();

beforeAll(async () => {
  world = started.add(await startNoticeStack());
}, 600_000);

describe('a held call tells the people asked', () => {
  it('once per destination, by e-mail, Slack and Teams, and the approval record says so', async () => {
    const { approvalId, agent } = await world.heldCall({
      requested_from: [`person:${ALICE}`, 'ops-a'],
    });
    const notices = await world.settledNotices(approvalId, 4);
    expect(
      notices.map(({ channel, round, to, status, attempts }) => ({
        channel,
        round,
        to,
        status,
        attempts,
      })),
    ).toEqual(
      expect.arrayContaining([
        { channel: 'email', round: 'requested', to: ALICE, status: 'sent', attempts: 1 },
        { channel: 'slack', round: 'requested', to: `@${ALICE}`, status: 'sent', attempts: 1 },
        { channel: 'slack', round: 'requested', to: '#C0APPROVALS', status: 'sent', attempts: 1 },
        {
          channel: 'teams',
          round: 'requested',
          to: new URL(world.teams.url).hostname,
          status: 'sent',
          attempts: 1,
        },
      ]),
    );
    expect(notices).toHaveLength(4);

    const [mail] = world.mailsTo(ALICE, approvalId);
    expect(world.mailsTo(ALICE, approvalId)).toHaveLength(1);
    // The e-mail, to Alice alone, carries her decision link…
    expect(mail?.parsed.text).toContain(APPROVAL_PAGE_PATH);
    // …which never reaches the agent: its own view of the approval shows where messages went.
    const seen = await world.stack.request(agent, 'GET', `/v1/approvals/${approvalId}`);
    expect(seen.status).toBe(200);
    expect((seen.body as { notifications?: unknown[] }).notifications).toHaveLength(4);
    expect(JSON.stringify(seen.body)).not.toContain(APPROVAL_PAGE_PATH);
    const posts = world.postsOf(approvalId);
    expect(posts.map((p) => p.channel.startsWith('D') || p.channel === 'C0APPROVALS')).toEqual([
      true,
      true,
    ]);
    // Chat messages send people to the console's page, never a decision link anyone in the
    // channel could use.
    const slackText = JSON.stringify(posts.map((p) => p.blocks));
    expect(slackText).toContain(`/console/test/inbox/${approvalId}`);
    expect(slackText).not.toContain(APPROVAL_PAGE_PATH);
    const [delivery] = (await world.teams.received()).filter((d) =>
      JSON.stringify(d.body).includes(approvalId),
    );
    expect(delivery?.problems).toEqual([]);
    expect(JSON.stringify(delivery?.body)).toContain(`/console/test/inbox/${approvalId}`);
    expect(JSON.stringify(delivery?.body)).not.toContain(APPROVAL_PAGE_PATH);
  });

  it('rewrites its Slack messages with the tally after each decision, wherever it was made', async () => {
    const { approvalId } = await world.heldCall({
      requested_from: ['ops-a', 'ops-b', `person:${ALICE}`],
      quorum: 2,
    });
    await world.settledNotices(approvalId, 4);
    const first = await world.stack.request(
      world.opsA,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(first.body).toMatchObject({ status: 'pending', approvals_needed: 1 });
    await eventually('the tally in Slack', () => {
      const posts = world.postsOf(approvalId);
      return posts.every((p) => p.updates >= 1 && JSON.stringify(p.blocks).includes('1 of 2'))
        ? posts
        : null;
    });
    const second = await world.stack.request(
      world.opsB,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(second.body).toMatchObject({ status: 'approved' });
    const decided = await eventually('the outcome in Slack', () => {
      const posts = world.postsOf(approvalId);
      return posts.every((p) => p.updates >= 2) ? posts : null;
    });
    for (const post of decided) {
      const shown = JSON.stringify(post.blocks);
      expect(shown).toMatch(/Approved/);
      // No button left to press once settled.
      expect(shown).not.toContain('gatehouse_approve');
    }
  });
});

describe('a round reaching a crowd', () => {
  it(`sends at most ${String(MAX_MESSAGES_PER_ROUND)} messages, shared places first, and records the rest as not sent, with why`, async () => {
    const { sql } = world.stack.db;
    const crowd = MAX_MESSAGES_PER_ROUND + 3;
    for (let i = 0; i < crowd; i += 1) {
      await upsertPerson(sql, {
        issuer: 'https://idp.example.com',
        subject: `crowd-${String(i)}`,
        email: `crowd-${String(i).padStart(3, '0')}@example.com`,
        name: `Crowd ${String(i)}`,
        groups: ['crowd'],
      });
    }
    const route = await world.stack.request(
      world.stack.key,
      'PUT',
      `/v1/notification-routes/${encodeURIComponent('group:crowd')}/email`,
      { body: { targets: [{ each_person: true }] } },
    );
    expect(route.status).toBe(200);
    const { approvalId } = await world.heldCall({ requested_from: ['group:crowd'] });
    // The crowd's e-mails, #approvals and Teams.
    const notices = await world.settledNotices(approvalId, crowd + 2);
    const skipped = notices.filter((n) => n.status === 'skipped');
    expect(notices.filter((n) => n.status === 'sent')).toHaveLength(MAX_MESSAGES_PER_ROUND);
    // The shared places, each reaching many, go first: those left out are personal e-mails.
    expect(skipped).toHaveLength(crowd + 2 - MAX_MESSAGES_PER_ROUND);
    for (const notice of skipped) {
      expect(notice.channel).toBe('email');
      expect(notice.last_error).toMatch(/more than 200 destinations/);
    }
    expect(notices.filter((n) => n.channel !== 'email').map((n) => n.status)).toEqual([
      'sent',
      'sent',
    ]);
  }, 180_000);
});

describe('an approval nobody decided', () => {
  it('expires, and its Slack messages say so, with no buttons left', async () => {
    const { approvalId } = await world.heldCall({
      requested_from: [`person:${ALICE}`],
      // Long enough for the posts to go out first on a loaded machine: a post that would go
      // after the expiry is skipped, and there would be nothing to rewrite.
      ttl_seconds: 15,
    });
    const posts = await eventually('the posts rewritten as expired', () => {
      const found = world.postsOf(approvalId);
      return found.length === 2 && found.every((p) => JSON.stringify(p.blocks).includes('Expired'))
        ? found
        : null;
    });
    for (const post of posts)
      expect(JSON.stringify(post.blocks)).not.toContain('gatehouse_approve');
    expect((await world.record(approvalId)).status).toBe('expired');
  });
});

describe('reminders and escalation', () => {
  it('reminds the asked, then asks and tells the escalation entries, on the workflow’s timers', async () => {
    const { approvalId } = await world.heldCall({
      requested_from: [`person:${ALICE}`],
      remind_after_seconds: 1,
      escalate_after_seconds: 2,
      escalate_to: [`person:${BOB}`],
    });
    const notices = await eventually('the escalation sent', async () => {
      const { notifications } = await world.record(approvalId);
      return notifications.some((n) => n.round === 'escalation' && n.status === 'sent')
        ? notifications
        : null;
    });
    const rounds = notices.map((n) => `${n.round} ${n.channel} ${n.to}`);
    expect(rounds).toEqual(
      expect.arrayContaining([
        `requested email ${ALICE}`,
        `reminder email ${ALICE}`,
        `escalation email ${BOB}`,
      ]),
    );
    // Bob is asked now: his e-mail carries a link addressed to him.
    expect((await world.record(approvalId)).requested_from).toEqual([
      `person:${ALICE}`,
      `person:${BOB}`,
    ]);
    await eventually('the reminder mail', () =>
      world.mailsTo(ALICE, approvalId).length === 2 ? 1 : null,
    );
    await eventually('the escalation mail', () =>
      world.mailsTo(BOB, approvalId).length > 0 ? 1 : null,
    );
    expect(world.mailsTo(BOB, approvalId)).toHaveLength(1);
  });

  it('stops its timers when the approval is decided', async () => {
    const { approvalId, workflowId } = await world.heldCall({
      requested_from: ['ops-a', `person:${BOB}`],
      remind_after_seconds: 3000,
      escalate_after_seconds: 3500,
      escalate_to: ['ops-b'],
    });
    // Bob's e-mail, #approvals and Teams (keys' agents are told by webhook, not here).
    await world.settledNotices(approvalId, 3);
    const rejected = await world.stack.request(
      world.opsA,
      'POST',
      `/v1/approvals/${approvalId}/reject`,
    );
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    // The reminder's timer is cancelled, not left to fire in an hour.
    const handle = world.stack.api.temporal.workflow.getHandle(workflowId);
    await eventually('the reminder timer cancelled', async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      // The reminder's timer is the one of about 3,000 s (the expiry's is 3,600 s).
      const reminder = events.find((event) => {
        const seconds = Number(
          event.timerStartedEventAttributes?.startToFireTimeout?.seconds?.toString() ?? 0,
        );
        return seconds > 2900 && seconds <= 3000;
      })?.timerStartedEventAttributes?.timerId;
      expect(reminder).toBeDefined();
      return events.some((event) => event.timerCanceledEventAttributes?.timerId === reminder)
        ? true
        : null;
    });
    const { notifications } = await world.record(approvalId);
    expect(notifications.every((n) => n.round === 'requested')).toBe(true);
  });
});
