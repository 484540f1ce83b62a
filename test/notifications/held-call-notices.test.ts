import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { startSlackStandin, type SlackStandin } from '../../infra/slack-standin/index.js';
import { startTeamsStandin, type TeamsStandin } from '../../infra/teams-standin/index.js';
import { approvalIdOf } from '../approvals/approval-stack.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { eventually } from '../support/eventually.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { startTestSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A held call tells the people asked through its own workflow (README "Tell approvers where they
 * work"): the e-mail relay, Slack and Teams are real software on loopback (an SMTP server, the
 * Slack and Teams stand-ins), routes and channels are set through the management API, and what
 * each received is read back. Each message goes once per destination, the approval record says
 * what went where, and a decision made anywhere rewrites the Slack messages.
 */

const BOT_TOKEN = `xoxb-${randomUUID()}`;
const SIGNING_SECRET = randomUUID().replaceAll('-', '');
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

let stack: CallStack;
let smtp: TestSmtpServer;
let slack: SlackStandin;
let teams: TeamsStandin;
let admin: TestKey;
/** Full keys whose agents are asked beside Alice: they decide in these tests. */
let opsA: TestKey;
let opsB: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack({ env: { NOTIFY_ALLOW_PRIVATE: 'true' } }));
  smtp = started.add(await startTestSmtpServer());
  slack = started.add(
    await startSlackStandin({
      token: BOT_TOKEN,
      users: [
        { id: 'U0ALICE', email: ALICE, name: 'alice' },
        { id: 'U0BOB', email: BOB, name: 'bob' },
      ],
      channels: [{ id: 'C0APPROVALS', name: 'approvals', members: ['U0ALICE', 'U0BOB'] }],
    }),
  );
  teams = started.add(await startTeamsStandin());
  admin = stack.key;
  opsA = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'ops-a' });
  opsB = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'ops-b' });
  await stack.connect('u_notice');

  const put = async (path: string, body: unknown) => {
    const answer = await stack.request(admin, 'PUT', path, { body });
    expect({ path, status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
  };
  await put('/v1/notification-channels/email', {
    host: smtp.host,
    port: smtp.port,
    security: 'none',
    sender_address: 'approvals@gatehouse.test',
  });
  await put('/v1/notification-channels/slack', {
    bot_token: BOT_TOKEN,
    signing_secret: SIGNING_SECRET,
    api_base_url: slack.url,
  });
  await put('/v1/notification-channels/teams', {});
  await put(`/v1/notification-routes/${encodeURIComponent(`person:${ALICE}`)}/email`, {
    targets: [{ each_person: true }],
  });
  await put(`/v1/notification-routes/${encodeURIComponent(`person:${ALICE}`)}/slack`, {
    targets: [{ each_person: true }],
  });
  await put(`/v1/notification-routes/${encodeURIComponent(`person:${BOB}`)}/email`, {
    targets: [{ each_person: true }],
  });
  // Every approval is also posted in #approvals and the Teams channel.
  await put(`/v1/notification-routes/${encodeURIComponent('*')}/slack`, {
    targets: [{ slack_channel: 'C0APPROVALS' }],
  });
  await put(`/v1/notification-routes/${encodeURIComponent('*')}/teams`, {
    targets: [{ webhook_url: teams.url }],
  });
}, 600_000);

interface Notice {
  channel: string;
  round: string;
  to: string;
  status: string;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
}

interface ApprovalRecord {
  status: string;
  requested_from: string[];
  notifications: Notice[];
}

/** An agent of its own under a policy asking `approval`, and one held call of it. */
async function heldCall(
  approval: Record<string, unknown>,
): Promise<{ approvalId: string; agent: TestKey; workflowId: string }> {
  const policyId = `notice-${randomUUID().slice(0, 8)}`;
  const agentId = `${policyId}-bot`;
  const agent = await createTestKey(stack.db.sql, { env: 'test', access: 'standard', agentId });
  const policy = await stack.request(admin, 'PUT', `/v1/policies/${policyId}`, {
    body: {
      name: policyId,
      agents: [agentId],
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      approval: { ttl_seconds: 3600, ...approval },
    },
  });
  expect(policy.status).toBe(200);
  const answer = await stack.run(
    'acme.create_task',
    { user: 'u_notice', input: { title: `notice ${policyId}` } },
    { key: agent },
  );
  const approvalId = approvalIdOf(answer);
  const [row] = await stack.db.sql<{ workflowId: string }[]>`
    select workflow_id from approvals where id = ${approvalId}`;
  return { approvalId, agent, workflowId: row?.workflowId ?? '' };
}

async function record(approvalId: string): Promise<ApprovalRecord> {
  const answer = await stack.request(admin, 'GET', `/v1/approvals/${approvalId}`);
  expect(answer.status).toBe(200);
  return answer.body as unknown as ApprovalRecord;
}

/** The approval record once `count` notifications of it are settled (sent, failed or skipped). */
function settledNotices(approvalId: string, count: number): Promise<Notice[]> {
  return eventually(`${String(count)} notifications of ${approvalId} settled`, async () => {
    const { notifications } = await record(approvalId);
    const settled = notifications.filter((n) => ['sent', 'failed', 'skipped'].includes(n.status));
    return settled.length >= count ? notifications : null;
  });
}

const mailsTo = (address: string, approvalId: string) =>
  smtp.messages.filter(
    (m) =>
      m.envelope.to.includes(address) &&
      m.parsed.headers.get('x-gatehouse-approval') === approvalId,
  );

const postsOf = (approvalId: string) =>
  slack
    .messages()
    .filter(
      (m) =>
        m.ephemeralFor === null &&
        (m.metadata?.event_payload as { approval_id?: string } | undefined)?.approval_id ===
          approvalId,
    );

describe('a held call tells the people asked', () => {
  it('once per destination, by e-mail, Slack and Teams, and the approval record says so', async () => {
    const { approvalId } = await heldCall({ requested_from: [`person:${ALICE}`, 'ops-a'] });
    const notices = await settledNotices(approvalId, 4);
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
          to: new URL(teams.url).hostname,
          status: 'sent',
          attempts: 1,
        },
      ]),
    );
    expect(notices).toHaveLength(4);

    expect(mailsTo(ALICE, approvalId)).toHaveLength(1);
    const posts = postsOf(approvalId);
    expect(posts.map((p) => p.channel.startsWith('D') || p.channel === 'C0APPROVALS')).toEqual([
      true,
      true,
    ]);
    // Chat messages send people to the console's page, never a decision link anyone in the
    // channel could use.
    const slackText = JSON.stringify(posts.map((p) => p.blocks));
    expect(slackText).toContain(`/console/test/inbox/${approvalId}`);
    expect(slackText).not.toMatch(/\/approve\/|token=|\/v1\/approval-links/);
    const [delivery] = (await teams.received()).filter((d) =>
      JSON.stringify(d.body).includes(approvalId),
    );
    expect(delivery?.problems).toEqual([]);
    expect(JSON.stringify(delivery?.body)).toContain(`/console/test/inbox/${approvalId}`);
  });

  it('rewrites its Slack messages with the tally after each decision, wherever it was made', async () => {
    const { approvalId } = await heldCall({
      requested_from: ['ops-a', 'ops-b', `person:${ALICE}`],
      quorum: 2,
    });
    await settledNotices(approvalId, 4);
    const first = await stack.request(opsA, 'POST', `/v1/approvals/${approvalId}/approve`);
    expect(first.body).toMatchObject({ status: 'pending', approvals_needed: 1 });
    await eventually('the tally in Slack', () => {
      const posts = postsOf(approvalId);
      return posts.every((p) => p.updates >= 1 && JSON.stringify(p.blocks).includes('1 of 2'))
        ? posts
        : null;
    });
    const second = await stack.request(opsB, 'POST', `/v1/approvals/${approvalId}/approve`);
    expect(second.body).toMatchObject({ status: 'approved' });
    const decided = await eventually('the outcome in Slack', () => {
      const posts = postsOf(approvalId);
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

describe('reminders and escalation', () => {
  it('reminds the asked, then asks and tells the escalation entries, on the workflow’s timers', async () => {
    const { approvalId } = await heldCall({
      requested_from: [`person:${ALICE}`],
      remind_after_seconds: 1,
      escalate_after_seconds: 2,
      escalate_to: [`person:${BOB}`],
    });
    const notices = await eventually('the escalation sent', async () => {
      const { notifications } = await record(approvalId);
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
    expect((await record(approvalId)).requested_from).toEqual([`person:${ALICE}`, `person:${BOB}`]);
    await eventually('the reminder mail', () =>
      mailsTo(ALICE, approvalId).length === 2 ? 1 : null,
    );
    await eventually('the escalation mail', () => (mailsTo(BOB, approvalId).length > 0 ? 1 : null));
    expect(mailsTo(BOB, approvalId)).toHaveLength(1);
  });

  it('stops its timers when the approval is decided', async () => {
    const { approvalId, workflowId } = await heldCall({
      requested_from: ['ops-a', `person:${BOB}`],
      remind_after_seconds: 3000,
      escalate_after_seconds: 3500,
      escalate_to: ['ops-b'],
    });
    // Bob's e-mail, #approvals and Teams (keys' agents are told by webhook, not here).
    await settledNotices(approvalId, 3);
    const rejected = await stack.request(opsA, 'POST', `/v1/approvals/${approvalId}/reject`);
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    // The reminder's timer is cancelled, not left to fire in an hour.
    const handle = stack.api.temporal.workflow.getHandle(workflowId);
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
    const { notifications } = await record(approvalId);
    expect(notifications.every((n) => n.round === 'requested')).toBe(true);
  });
});
