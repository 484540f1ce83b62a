import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  startSlackStandin,
  type SeededUserInput,
  type SlackStandin,
} from '../../infra/slack-standin/index.js';
import { startTeamsStandin, type TeamsStandin } from '../../infra/teams-standin/index.js';
import { approvalIdOf } from '../approvals/approval-stack.js';
import { startCallStack, type CallStack } from './call-stack.js';
import { eventually } from './eventually.js';
import { createTestKey, type TestKey } from './keys.js';
import { startTestSmtpServer, type ReceivedMessage, type TestSmtpServer } from './smtp-server.js';
import { startOrUndo } from './stops.js';

/**
 * A governed-call stack whose environment tells approvers: a real SMTP server as its relay, the
 * Slack and Teams stand-ins, channels and routes set through the management API. Alice is told by
 * e-mail and a Slack direct message, Bob by e-mail, and every approval is posted in #approvals
 * (C0APPROVALS) and to the Teams webhook. Keys `ops-a` and `ops-b` decide where they are asked.
 */

export const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';
export const SLACK_CHANNEL = 'C0APPROVALS';

export interface Notice {
  channel: string;
  round: string;
  addressee: string;
  to: string;
  status: string;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
}

export interface ApprovalRecord {
  status: string;
  requested_from: string[];
  notifications: Notice[];
}

export interface HeldCall {
  approvalId: string;
  agent: TestKey;
  workflowId: string;
}

export interface NoticeStack {
  stack: CallStack;
  smtp: TestSmtpServer;
  slack: SlackStandin;
  teams: TeamsStandin;
  signingSecret: string;
  opsA: TestKey;
  opsB: TestKey;
  /** An agent of its own under a policy asking `approval` (ttl 1 h unless given), held once. */
  heldCall(approval: Record<string, unknown>): Promise<HeldCall>;
  record(approvalId: string): Promise<ApprovalRecord>;
  /** The notifications once `count` of them are settled (sent, failed or skipped). */
  settledNotices(approvalId: string, count: number): Promise<Notice[]>;
  mailsTo(address: string, approvalId: string): ReceivedMessage[];
  /** The stand-in's messages posted about the approval (not ephemeral), oldest first. */
  postsOf(approvalId: string): ReturnType<SlackStandin['messages']>;
  stop(): Promise<void>;
}

export async function startNoticeStack(
  options: { slackUsers?: SeededUserInput[] } = {},
): Promise<NoticeStack> {
  return startOrUndo(async (stops) => {
    const botToken = `xoxb-${randomUUID()}`;
    const signingSecret = randomUUID().replaceAll('-', '');
    const stack = stops.add(await startCallStack({ env: { NOTIFY_ALLOW_PRIVATE: 'true' } }));
    const smtp = stops.add(await startTestSmtpServer());
    const users = options.slackUsers ?? [
      { id: 'U0ALICE', email: ALICE, name: 'alice' },
      { id: 'U0BOB', email: BOB, name: 'bob' },
    ];
    const slack = stops.add(
      await startSlackStandin({
        token: botToken,
        users,
        channels: [{ id: SLACK_CHANNEL, name: 'approvals', members: users.map((user) => user.id) }],
      }),
    );
    const teams = stops.add(await startTeamsStandin());
    const opsA = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'full',
      agentId: 'ops-a',
    });
    const opsB = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'full',
      agentId: 'ops-b',
    });
    await stack.connect('u_notice');

    const put = async (path: string, body: unknown) => {
      const answer = await stack.request(stack.key, 'PUT', path, { body });
      expect({ path, status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
    };
    const routes = (audience: string, kind: string) =>
      `/v1/notification-routes/${encodeURIComponent(audience)}/${kind}`;
    await put('/v1/notification-channels/email', {
      host: smtp.host,
      port: smtp.port,
      security: 'none',
      sender_address: 'approvals@gatehouse.test',
    });
    await put('/v1/notification-channels/slack', {
      bot_token: botToken,
      signing_secret: signingSecret,
      api_base_url: slack.url,
    });
    await put('/v1/notification-channels/teams', {});
    await put(routes(`person:${ALICE}`, 'email'), { targets: [{ each_person: true }] });
    await put(routes(`person:${ALICE}`, 'slack'), { targets: [{ each_person: true }] });
    await put(routes(`person:${BOB}`, 'email'), { targets: [{ each_person: true }] });
    await put(routes('*', 'slack'), { targets: [{ slack_channel: SLACK_CHANNEL }] });
    await put(routes('*', 'teams'), { targets: [{ webhook_url: teams.url }] });

    async function record(approvalId: string): Promise<ApprovalRecord> {
      const answer = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
      expect(answer.status).toBe(200);
      return answer.body as unknown as ApprovalRecord;
    }

    return {
      stack,
      smtp,
      slack,
      teams,
      signingSecret,
      opsA,
      opsB,
      async heldCall(approval) {
        const policyId = `notice-${randomUUID().slice(0, 8)}`;
        const agentId = `${policyId}-bot`;
        const agent = await createTestKey(stack.db.sql, {
          env: 'test',
          access: 'standard',
          agentId,
        });
        const policy = await stack.request(stack.key, 'PUT', `/v1/policies/${policyId}`, {
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
      },
      record,
      settledNotices(approvalId, count) {
        return eventually(`${String(count)} notifications of ${approvalId} settled`, async () => {
          const { notifications } = await record(approvalId);
          const settled = notifications.filter((n) =>
            ['sent', 'failed', 'skipped'].includes(n.status),
          );
          return settled.length >= count ? notifications : null;
        });
      },
      mailsTo: (address, approvalId) =>
        smtp.messages.filter(
          (m) =>
            m.envelope.to.includes(address) &&
            m.parsed.headers.get('x-gatehouse-approval') === approvalId,
        ),
      postsOf: (approvalId) =>
        slack.messages().filter((m) => {
          const payload: Record<string, unknown> = { ...m.metadata?.event_payload };
          return m.ephemeralFor === null && payload.approval_id === approvalId;
        }),
      stop: () => stops.stopAll(),
    };
  });
}
