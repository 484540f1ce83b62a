import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { approvalNotifications } from '../../infra/telemetry/metrics.js';
import { eventually } from '../support/eventually.js';
import {
  ALICE,
  BOB,
  SLACK_CHANNEL,
  startNoticeStack,
  type NoticeStack,
} from '../support/notice-stack.js';
import { stopsAfterAll } from '../support/stops.js';
import { startWorkerProcess } from '../support/worker-process.js';

/**
 * Every channel through its faults, with exactly one message per destination at the end: the relay
 * down then up, Slack's and Teams' rate limits with Retry-After, and a worker killed after Slack
 * took a post and before the attempt could record it.
 */

let world: NoticeStack;
const started = stopsAfterAll();
const killed: (() => Promise<void>)[] = [];

beforeAll(async () => {
  world = started.add(await startNoticeStack());
}, 600_000);

afterAll(async () => {
  for (const kill of killed) await kill();
});

describe('a channel that fails', () => {
  it('an SMTP relay down, then up: the e-mail goes once, after, and the record shows the failure meanwhile', async () => {
    await world.smtp.down();
    const { approvalId } = await world.heldCall({ requested_from: [`person:${ALICE}`] });
    const failing = await eventually('the e-mail failing', async () => {
      const { notifications } = await world.record(approvalId);
      return notifications.find((n) => n.channel === 'email' && n.status === 'retrying');
    });
    expect(failing.last_error).toMatch(/SMTP relay .* failed/);
    expect(failing.sent_at).toBeNull();
    // Counted too, for the operator's dashboards (the worker runs in this process).
    const retried = (await approvalNotifications.get()).values.find(
      (value) => value.labels.channel === 'email' && value.labels.outcome === 'retrying',
    );
    expect(retried?.value).toBeGreaterThanOrEqual(1);
    await world.smtp.up();
    const sent = await eventually('the e-mail sent', async () => {
      const { notifications } = await world.record(approvalId);
      return notifications.find((n) => n.channel === 'email' && n.status === 'sent');
    });
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    expect(sent.last_error).toBeNull();
    expect(world.mailsTo(ALICE, approvalId)).toHaveLength(1);
  });

  it("Slack rate-limits the post: it is posted once, after Slack's Retry-After", async () => {
    const limited = world.slack.inject({
      kind: 'rate_limited',
      method: 'chat.postMessage',
      retryAfterSeconds: 1,
      times: 1,
    });
    const { approvalId } = await world.heldCall({ requested_from: [`person:${ALICE}`] });
    await limited.met;
    await world.settledNotices(approvalId, 4);
    const { notifications } = await world.record(approvalId);
    const slackNotices = notifications.filter((n) => n.channel === 'slack');
    expect(slackNotices.map((n) => n.status)).toEqual(['sent', 'sent']);
    // One of the two posts met the limit and was tried again.
    expect(slackNotices.map((n) => n.attempts).sort()).toEqual([1, 2]);
    expect(world.postsOf(approvalId)).toHaveLength(2);
    const refused = world.slack.calls().filter((c) => c.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
  });

  it('a Teams webhook rate-limits the card: it is posted once, after its Retry-After', async () => {
    const limited = world.teams.inject({ kind: 'rate_limited', retryAfterSeconds: 1, times: 1 });
    const { approvalId } = await world.heldCall({ requested_from: [`person:${ALICE}`] });
    await limited.met;
    const sent = await eventually('the card sent', async () => {
      const { notifications } = await world.record(approvalId);
      return notifications.find((n) => n.channel === 'teams' && n.status === 'sent');
    });
    expect(sent.attempts).toBe(2);
    const cards = world.teams
      .deliveries()
      .filter((d) => d.status === 202 && JSON.stringify(d.body).includes(approvalId));
    expect(cards).toHaveLength(1);
  });

  it('a worker killed after Slack took the post, before it was recorded: no second post', async () => {
    // The notices run on a worker process that can be killed outright.
    await world.stack.worker.stop();
    const child = await startWorkerProcess(world.stack.config);
    killed.push(() => child.kill());
    const held = world.slack.inject({ kind: 'answer_held', method: 'chat.postMessage', times: 1 });
    const { approvalId } = await world.heldCall({ requested_from: ['ops-a', `person:${BOB}`] });
    // Slack has the post (only #approvals: Bob has no Slack route), and its answer is held.
    await held.met;
    expect(world.postsOf(approvalId)).toHaveLength(1);
    await child.kill();
    held.release();
    await world.stack.restartWorker();

    const sent = await eventually('the post recorded', async () => {
      const { notifications } = await world.record(approvalId);
      return notifications.find((n) => n.channel === 'slack' && n.status === 'sent');
    });
    expect(sent.to).toBe(`#${SLACK_CHANNEL}`);
    expect(sent.attempts).toBe(2);
    expect(world.postsOf(approvalId)).toHaveLength(1);
    // The next attempt looked before posting.
    const looked = world.slack
      .calls()
      .filter((c) => c.method === 'conversations.history' && c.args.channel === SLACK_CHANNEL);
    expect(looked.length).toBeGreaterThanOrEqual(1);

    // And the post is the one rewritten when the approval is decided.
    const rejected = await world.stack.request(
      world.opsA,
      'POST',
      `/v1/approvals/${approvalId}/reject`,
    );
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    await eventually('the post rewritten', () => {
      const [post] = world.postsOf(approvalId);
      return post && post.updates >= 1 ? post : null;
    });
  }, 120_000);
});
