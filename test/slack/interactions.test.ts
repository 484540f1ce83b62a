import { beforeAll, describe, expect, it } from '@jest/globals';
import { setGroupRoles } from '../../activities/db/role-mappings.js';
import { SLACK_APPROVAL_ACTIONS } from '../../activities/notifications/slack-message.js';
import { slackSignature } from '../../infra/slack-standin/interactivity-request.js';
import { eventually } from '../support/eventually.js';
import { createTestKey } from '../support/keys.js';
import {
  ALICE,
  BOB,
  SLACK_CHANNEL,
  startNoticeStack,
  type NoticeStack,
} from '../support/notice-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Deciding with the buttons of an approval's Slack message, end to end: the call's workflow posts
 * the message to the Slack stand-in, a person presses a button there, the stand-in signs the
 * press as Slack does and sends it to Gatehouse's interactivity endpoint, the decision is the
 * person's (by the e-mail Slack confirmed), and the message is rewritten with the tally. Every
 * refusal reaches the presser alone; a forged, stale or replayed request decides nothing.
 */

const CAROL = 'carol@example.com';
const DAVE = 'dave@example.com';
const ERIN = 'erin@example.com';

let world: NoticeStack;
let interactions: string;
const started = stopsAfterAll();

beforeAll(async () => {
  world = started.add(
    await startNoticeStack({
      slackUsers: [
        { id: 'U0ALICE', email: ALICE, name: 'alice' },
        { id: 'U0BOB', email: BOB, name: 'bob' },
        { id: 'U0CAROL', email: CAROL, name: 'carol' },
        { id: 'U0DAVE', email: DAVE, name: 'dave', emailConfirmed: false },
        { id: 'U0ERIN', email: ERIN, name: 'erin' },
      ],
    }),
  );
  const { sql } = world.stack.db;
  for (const email of [ALICE, BOB, CAROL, DAVE]) {
    await setGroupRoles(sql, world.stack.environmentId, `person:${email}`, ['approver']);
  }
  interactions = `${world.stack.api.url}/slack/test/interactions`;
}, 600_000);

const target = () => ({ url: interactions, signingSecret: world.signingSecret });

/** The message posted in a conversation about an approval, once there. */
function postIn(approvalId: string, channel: (id: string) => boolean) {
  return eventually('the approval message in Slack', () =>
    world.postsOf(approvalId).find((post) => channel(post.channel)),
  );
}

/** The answer only `user` sees, the `nth` one (1: the first), once there. */
function ephemeralFor(user: string, nth = 1) {
  return eventually(`answer ${String(nth)} to ${user}`, () => {
    const answers = world.slack.messages().filter((m) => m.ephemeralFor === user);
    return answers.length >= nth ? answers[nth - 1] : null;
  });
}

async function approval(approvalId: string) {
  return (await world.stack.request(world.stack.key, 'GET', `/v1/approvals/${approvalId}`))
    .body as {
    status: string;
    approvals_needed: number;
    decisions: { by: string; via: string; decision: string }[];
  };
}

describe('a button press in Slack', () => {
  it('decides a quorum approval as the person who pressed, and the messages show the tally', async () => {
    const { approvalId } = await world.heldCall({
      requested_from: [`person:${ALICE}`, `person:${BOB}`],
      quorum: 2,
    });
    const dm = await postIn(approvalId, (id) => id.startsWith('D'));
    const pressed = await world.slack.pressButton(
      { user: 'U0ALICE', channel: dm.channel, ts: dm.ts, actionId: SLACK_APPROVAL_ACTIONS.approve },
      target(),
    );
    expect(pressed.status).toBe(200);
    expect((await ephemeralFor('U0ALICE')).text).toMatch(/1 more approval is needed/);
    expect(await approval(approvalId)).toMatchObject({
      status: 'pending',
      approvals_needed: 1,
      decisions: [{ by: `person:${ALICE}`, via: 'slack', decision: 'approve' }],
    });
    await eventually('the tally in every message', () =>
      world.postsOf(approvalId).every((post) => JSON.stringify(post.blocks).includes('1 of 2'))
        ? true
        : null,
    );

    // Bob, in #approvals.
    const inChannel = await postIn(approvalId, (id) => id === SLACK_CHANNEL);
    await world.slack.pressButton(
      {
        user: 'U0BOB',
        channel: SLACK_CHANNEL,
        ts: inChannel.ts,
        actionId: SLACK_APPROVAL_ACTIONS.approve,
      },
      target(),
    );
    expect((await ephemeralFor('U0BOB')).text).toMatch(/^Approved/);
    expect(await approval(approvalId)).toMatchObject({ status: 'approved', approvals_needed: 0 });
    const settled = await eventually('the outcome in every message', () => {
      const posts = world.postsOf(approvalId);
      return posts.every((post) => JSON.stringify(post.blocks).includes('Approved')) ? posts : null;
    });
    for (const post of settled) {
      const shown = JSON.stringify(post.blocks);
      expect(shown).toContain('bob@example.com');
      expect(shown).not.toContain(SLACK_APPROVAL_ACTIONS.approve);
    }
  });

  it('refuses, to the presser alone, a person not asked, the same person twice, an unconfirmed e-mail and someone without the approver role', async () => {
    const { approvalId } = await world.heldCall({
      requested_from: [`person:${ALICE}`, `person:${DAVE}`, `person:${ERIN}`, 'ops-a'],
      quorum: 2,
    });
    const post = await postIn(approvalId, (id) => id === SLACK_CHANNEL);
    const press = (user: string, actionId: string = SLACK_APPROVAL_ACTIONS.approve) =>
      world.slack.pressButton({ user, channel: SLACK_CHANNEL, ts: post.ts, actionId }, target());
    const seen = (user: string) =>
      world.slack.messages().filter((m) => m.ephemeralFor === user).length;

    const carolBefore = seen('U0CAROL');
    await press('U0CAROL');
    expect((await ephemeralFor('U0CAROL', carolBefore + 1)).text).toMatch(
      /cannot decide this approval/,
    );
    await press('U0DAVE');
    expect((await ephemeralFor('U0DAVE')).text).toMatch(/not confirmed with Slack/);
    await press('U0ERIN');
    expect((await ephemeralFor('U0ERIN')).text).toMatch(/do not hold the approver role/);
    const aliceBefore = seen('U0ALICE');
    await press('U0ALICE');
    expect((await ephemeralFor('U0ALICE', aliceBefore + 1)).text).toMatch(/1 more approval/);
    await press('U0ALICE', SLACK_APPROVAL_ACTIONS.reject);
    expect((await ephemeralFor('U0ALICE', aliceBefore + 2)).text).toMatch(
      /cannot decide this approval: .*already decided/,
    );
    // Only Alice's approval counts.
    expect(await approval(approvalId)).toMatchObject({
      status: 'pending',
      decisions: [{ by: `person:${ALICE}`, decision: 'approve' }],
    });
  });
});

describe('a request that is not Slack’s', () => {
  const send = (body: string, headers: Record<string, string>, url = interactions) =>
    fetch(url, { method: 'POST', headers, body });
  const signed = (body: string, timestamp = Math.floor(Date.now() / 1000)) => ({
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignature(world.signingSecret, String(timestamp), body),
  });

  it('is refused 401 when forged, stale or replayed, and decides nothing', async () => {
    const { approvalId } = await world.heldCall({ requested_from: [`person:${ALICE}`] });
    const dm = await postIn(approvalId, (id) => id.startsWith('D'));
    const tooOld = Math.floor(Date.now() / 1000) - 6 * 60;
    const stale = await world.slack.pressButton(
      {
        user: 'U0ALICE',
        channel: dm.channel,
        ts: dm.ts,
        actionId: SLACK_APPROVAL_ACTIONS.approve,
        timestampSeconds: tooOld,
      },
      target(),
    );
    expect(stale.status).toBe(401);
    expect(JSON.parse(stale.body)).toMatchObject({
      error: { code: 'invalid_api_key', retryable: false },
    });
    const forged = await world.slack.pressButton(
      { user: 'U0ALICE', channel: dm.channel, ts: dm.ts, actionId: SLACK_APPROVAL_ACTIONS.reject },
      { url: interactions, signingSecret: 'not-the-signing-secret' },
    );
    expect(forged.status).toBe(401);
    expect((await approval(approvalId)).decisions).toEqual([]);

    // A genuine press, then the very same request again.
    const genuine = await world.slack.pressButton(
      { user: 'U0ALICE', channel: dm.channel, ts: dm.ts, actionId: SLACK_APPROVAL_ACTIONS.reject },
      target(),
    );
    expect(genuine.status).toBe(200);
    const replay = await send(genuine.request.body, genuine.request.headers);
    expect(replay.status).toBe(401);
    await eventually('the rejection recorded', async () =>
      (await approval(approvalId)).status === 'rejected' ? true : null,
    );
    expect((await approval(approvalId)).decisions).toHaveLength(1);
  });

  it('is answered 400 in the envelope when its payload cannot be read, and 404 where no Slack app is set', async () => {
    for (const body of [
      'payload=not-json',
      'nothing=here',
      `payload=${encodeURIComponent('{"type":"block_actions","user":{}}')}`,
    ]) {
      const answer = await send(body, signed(body));
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ error: { code: 'invalid_request' } });
    }
    // Another payload type is acknowledged and ignored.
    const shortcut = `payload=${encodeURIComponent('{"type":"shortcut"}')}`;
    expect((await send(shortcut, signed(shortcut))).status).toBe(200);

    await createTestKey(world.stack.db.sql, { env: 'without-slack', access: 'full' });
    for (const url of [
      `${world.stack.api.url}/slack/without-slack/interactions`,
      `${world.stack.api.url}/slack/no-such-environment/interactions`,
    ]) {
      const answer = await send('payload=%7B%7D', signed('payload=%7B%7D'), url);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ error: { code: 'not_found' } });
    }
  });
});
