import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  LogLevel,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
  WebClientEvent,
  type KnownBlock,
} from '@slack/web-api';
import { checkSlackSignature } from '../../api/slack/request-signature.js';
import {
  interactivityPayload,
  startSlackStandin,
  type BlockActionsPayload,
  type SlackStandin,
} from '../../infra/slack-standin/index.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The Slack stand-in driven by Slack's own client, `@slack/web-api`'s WebClient, as Gatehouse's
 * senders will drive Slack: what it answers, what it refuses, its faults, and a button pressed.
 */

const TOKEN = 'xoxb-standin-token';
const SIGNING_SECRET = 'standin-signing-secret';
const ALICE = {
  id: 'U0ALICE',
  email: 'alice@example.com',
  name: 'alice',
  realName: 'Alice Approver',
};
const BOB = { id: 'U0BOB', email: 'bob@example.com', name: 'bob' };
const CAROL = { id: 'U0CAROL', email: 'carol@example.com', name: 'carol' };

let slack: SlackStandin;
let client: WebClient;
const started = stopsAfterAll();

/** A client of Slack's own library, pointed at the stand-in, with no retries unless asked. */
function clientOf(
  token: string | undefined,
  options: ConstructorParameters<typeof WebClient>[1] = {},
) {
  return new WebClient(token, {
    slackApiUrl: slack.url,
    logLevel: LogLevel.ERROR,
    retryConfig: { retries: 0 },
    ...options,
  });
}

async function slackError(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof WebAPIPlatformError))
    throw new Error(`not a platform error: ${String(error)}`);
  return error.data.error;
}

const section = (text: string): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text } });

beforeAll(async () => {
  slack = started.add(
    await startSlackStandin({
      users: [ALICE, BOB, CAROL],
      token: TOKEN,
      channels: [{ id: 'C0APPROVERS', name: 'approvers', members: [ALICE.id, BOB.id] }],
    }),
  );
  client = clientOf(TOKEN);
});

describe('the token', () => {
  it('auth.test answers for the app installed in the workspace', async () => {
    const answer = await client.auth.test();
    expect(answer).toMatchObject({
      ok: true,
      team_id: 'T0GATEHOUSE',
      user_id: 'U0GATEBOT',
      bot_id: 'B0GATEHOUSE',
    });
    const [call] = (await slack.received('auth.test')).slice(-1);
    expect(call).toMatchObject({
      tokenFrom: 'header',
      status: 200,
      contentType: 'application/x-www-form-urlencoded',
    });
  });

  it('a wrong token is invalid_auth, none at all not_authed, both with HTTP 200 as Slack answers', async () => {
    expect(await slackError(clientOf('xoxb-wrong').auth.test())).toBe('invalid_auth');
    expect(await slackError(clientOf(undefined).auth.test())).toBe('not_authed');
    const answers = slack
      .calls()
      .filter((c) => c.method === 'auth.test')
      .slice(-2);
    expect(answers.map((c) => [c.status, c.tokenFrom, c.answer])).toEqual([
      [200, 'header', { ok: false, error: 'invalid_auth' }],
      [200, 'none', { ok: false, error: 'not_authed' }],
    ]);
  });

  it('is taken as a form argument too, but never from a JSON body', async () => {
    const form = await fetch(`${slack.url}auth.test`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: TOKEN }).toString(),
    });
    expect(await form.json()).toMatchObject({ ok: true });
    const json = await fetch(`${slack.url}auth.test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ token: TOKEN }),
    });
    expect(await json.json()).toEqual({ ok: false, error: 'not_authed' });
  });
});

describe('finding people', () => {
  it('users.lookupByEmail finds a person by e-mail, whatever its case, with profile.email', async () => {
    const answer = await client.users.lookupByEmail({ email: 'Alice@Example.com' });
    expect(answer.user).toMatchObject({
      id: ALICE.id,
      name: 'alice',
      real_name: 'Alice Approver',
      profile: { email: 'alice@example.com', real_name: 'Alice Approver' },
    });
  });

  it('users.lookupByEmail answers users_not_found for an address nobody has', async () => {
    expect(await slackError(client.users.lookupByEmail({ email: 'mallory@example.com' }))).toBe(
      'users_not_found',
    );
  });

  it('users.info answers a person by id, and user_not_found for an unknown id', async () => {
    expect((await client.users.info({ user: BOB.id })).user).toMatchObject({
      id: BOB.id,
      profile: { email: BOB.email },
    });
    expect(await slackError(client.users.info({ user: 'U0NOBODY' }))).toBe('user_not_found');
  });
});

describe('direct messages', () => {
  it('conversations.open opens the app’s DM with a person once, then answers it as already open', async () => {
    const first = await client.conversations.open({ users: CAROL.id });
    expect(first.channel?.id).toMatch(/^D/);
    expect(first.already_open).toBeUndefined();
    const again = await client.conversations.open({ users: CAROL.id, return_im: true });
    expect(again).toMatchObject({ ok: true, no_op: true, already_open: true });
    expect(again.channel).toMatchObject({ id: first.channel?.id, is_im: true, user: CAROL.id });
    expect(await slackError(client.conversations.open({ users: 'U0NOBODY' }))).toBe(
      'user_not_found',
    );
  });

  it('chat.postMessage to a person’s id posts in the DM and answers its id, ts and message', async () => {
    const blocks = [section('*Approval needed*')];
    const answer = await client.chat.postMessage({
      channel: ALICE.id,
      text: 'Approval needed',
      blocks,
    });
    const dm = (await client.conversations.open({ users: ALICE.id })).channel?.id;
    expect(answer).toMatchObject({
      ok: true,
      channel: dm,
      message: { type: 'message', text: 'Approval needed', bot_id: 'B0GATEHOUSE', blocks },
    });
    expect(answer.ts).toMatch(/^\d{10}\.\d{6}$/);
    const stored = slack.messages().find((m) => m.ts === answer.ts);
    expect(stored).toMatchObject({ channel: dm, text: 'Approval needed', blocks, updates: 0 });
    // The form carried the blocks as JSON text; the record has them as Slack read them.
    const [call] = (await slack.received('chat.postMessage')).slice(-1);
    expect(call?.args.blocks).toEqual(blocks);
  });
});

describe('chat.postMessage refusals', () => {
  it('an unknown channel is channel_not_found; nothing to say is no_text', async () => {
    expect(await slackError(client.chat.postMessage({ channel: 'C0NOWHERE', text: 'hi' }))).toBe(
      'channel_not_found',
    );
    expect(await slackError(client.chat.postMessage({ channel: 'C0APPROVERS', text: '' }))).toBe(
      'no_text',
    );
  });

  it('blocks beyond Slack’s documented limits are invalid_blocks, naming each', async () => {
    const tooMany = Array.from({ length: 51 }, (_, i) => section(`line ${String(i)}`));
    const longHeader: KnownBlock = {
      type: 'header',
      text: { type: 'plain_text', text: 'h'.repeat(151) },
    };
    const error = await client.chat
      .postMessage({ channel: 'C0APPROVERS', text: 'x', blocks: [...tooMany, longHeader] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(WebAPIPlatformError);
    expect((error as WebAPIPlatformError).data).toMatchObject({
      ok: false,
      error: 'invalid_blocks',
      errors: ['blocks: more than 50 blocks', 'blocks[51].text.text: longer than 150 characters'],
    });
    expect(slack.messages().some((m) => m.text === 'x')).toBe(false);
  });

  it('blocks that are not JSON are invalid_blocks_format', async () => {
    const answer = await fetch(`${slack.url}chat.postMessage`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ channel: 'C0APPROVERS', text: 'x', blocks: '[{' }).toString(),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: false, error: 'invalid_blocks_format' });
  });
});

describe('JSON bodies', () => {
  it('chat.postMessage takes a JSON body with the token in the Authorization header', async () => {
    const answer = await fetch(`${slack.url}chat.postMessage`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json; charset=utf-8',
      },
      body: JSON.stringify({
        channel: '#approvers',
        text: 'as JSON',
        blocks: [section('as JSON')],
      }),
    });
    expect(await answer.json()).toMatchObject({ ok: true, channel: 'C0APPROVERS' });
  });

  it('a body that is not JSON is invalid_json, another media type invalid_post_type', async () => {
    const post = (contentType: string, body: string) =>
      fetch(`${slack.url}auth.test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType },
        body,
      }).then((r) => r.json());
    expect(await post('application/json', '{')).toEqual({ ok: false, error: 'invalid_json' });
    expect(await post('application/json', '[]')).toEqual({ ok: false, error: 'json_not_object' });
    expect(await post('text/plain', 'hi')).toEqual({ ok: false, error: 'invalid_post_type' });
  });

  it('an unknown method is unknown_method', async () => {
    expect(await slackError(client.apiCall('chat.postMessages', { channel: 'C0APPROVERS' }))).toBe(
      'unknown_method',
    );
  });
});

describe('chat.update and chat.postEphemeral', () => {
  it('chat.update replaces a message by channel and ts, and refuses one that is not there', async () => {
    const posted = await client.chat.postMessage({
      channel: BOB.id,
      text: 'pending',
      blocks: [section('pending')],
    });
    const channel = posted.channel ?? '';
    const ts = posted.ts ?? '';
    const updated = await client.chat.update({
      channel,
      ts,
      text: 'approved',
      blocks: [section('approved')],
    });
    expect(updated).toMatchObject({
      ok: true,
      channel,
      ts,
      text: 'approved',
      message: { text: 'approved' },
    });
    expect(slack.messages().find((m) => m.ts === ts)).toMatchObject({
      text: 'approved',
      updates: 1,
    });
    expect(await slackError(client.chat.update({ channel, ts: '1.000001', text: 'x' }))).toBe(
      'message_not_found',
    );
    // Updating needs the conversation's id, as chat.postMessage answered it, not the person's.
    expect(await slackError(client.chat.update({ channel: BOB.id, ts, text: 'x' }))).toBe(
      'channel_not_found',
    );
  });

  it('chat.postEphemeral shows a message to one member, and refuses someone not in the channel', async () => {
    const answer = await client.chat.postEphemeral({
      channel: 'C0APPROVERS',
      user: BOB.id,
      text: 'only Bob',
    });
    expect(answer.message_ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(slack.messages().find((m) => m.ts === answer.message_ts)).toMatchObject({
      channel: 'C0APPROVERS',
      ephemeralFor: BOB.id,
    });
    expect(
      await slackError(
        client.chat.postEphemeral({ channel: 'C0APPROVERS', user: CAROL.id, text: 'x' }),
      ),
    ).toBe('user_not_in_channel');
  });
});

describe('faults', () => {
  it('a 429 with Retry-After: the client waits as told and sends once more; the message is posted once', async () => {
    const retrying = clientOf(TOKEN, { retryConfig: { retries: 2, minTimeout: 0, maxTimeout: 0 } });
    const told: number[] = [];
    retrying.on(WebClientEvent.RATE_LIMITED, (seconds: number) => told.push(seconds));
    const before = slack.calls().length;
    slack.inject({ kind: 'rate_limited', retryAfterSeconds: 1, method: 'chat.postMessage' });
    const answer = await retrying.chat.postMessage({
      channel: 'C0APPROVERS',
      text: 'after the limit',
    });
    expect(answer.ok).toBe(true);
    expect(told).toEqual([1]);
    const calls = slack.calls().slice(before);
    expect(calls.map((c) => [c.method, c.status, c.fault])).toEqual([
      ['chat.postMessage', 429, 'rate_limited'],
      ['chat.postMessage', 200, null],
    ]);
    expect(calls[0]?.answer).toEqual({ ok: false, error: 'ratelimited' });
    expect(slack.messages().filter((m) => m.text === 'after the limit')).toHaveLength(1);
  });

  it('a client told to reject rate-limited calls gets the Retry-After seconds in its error', async () => {
    slack.inject({ kind: 'rate_limited', retryAfterSeconds: 30 });
    const error = await clientOf(TOKEN, { rejectRateLimitedCalls: true })
      .auth.test()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(WebAPIRateLimitedError);
    expect((error as WebAPIRateLimitedError).retryAfter).toBe(30);
  });

  it('a 5xx is an HTTP error to the client, and its retry is answered', async () => {
    slack.inject({ kind: 'server_error', status: 503, method: 'users.info' });
    const error = await client.users.info({ user: ALICE.id }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebAPIHTTPError);
    expect((error as WebAPIHTTPError).statusCode).toBe(503);

    slack.inject({ kind: 'server_error', status: 502, method: 'users.info' });
    const retrying = clientOf(TOKEN, { retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 } });
    expect((await retrying.users.info({ user: ALICE.id })).user?.id).toBe(ALICE.id);
    expect(
      slack
        .calls()
        .filter((c) => c.method === 'users.info')
        .slice(-2)
        .map((c) => c.status),
    ).toEqual([502, 200]);
  });

  it('a held call is answered only when released; a client with a timeout gives up first', async () => {
    const before = slack.calls().filter((c) => c.method === 'users.lookupByEmail').length;
    const held = slack.inject({ kind: 'hold', method: 'users.lookupByEmail' });
    const impatient = clientOf(TOKEN, { timeout: 100 });
    const gaveUp = impatient.users.lookupByEmail({ email: ALICE.email }).then(
      () => null,
      (e: unknown) => e,
    );
    await held.met;
    expect(await gaveUp).toBeInstanceOf(WebAPIRequestError);
    held.release();
    // The held request was still answered, late, to nobody: Slack may act on a call it answers late.
    const [late] = (await slack.received('users.lookupByEmail', before + 1)).slice(-1);
    expect(late).toMatchObject({ status: 200, fault: 'hold', answer: { ok: true } });
  });

  it('a delayed call is answered right, late', async () => {
    slack.inject({ kind: 'delay', ms: 50, method: 'auth.test' });
    expect((await client.auth.test()).ok).toBe(true);
    expect(
      slack
        .calls()
        .filter((c) => c.method === 'auth.test')
        .at(-1)?.fault,
    ).toBe('delay');
  });
});

describe('pressing a button', () => {
  interface Received {
    headers: Record<string, string | string[] | undefined>;
    body: string;
  }

  it('sends the interactivity endpoint a block_actions payload signed as Slack signs, with the button’s value', async () => {
    const received: Received[] = [];
    const endpoint = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        received.push({ headers: req.headers, body: body.toString('utf8') });
        const header = (name: string): string | undefined => {
          const value = req.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        const check = checkSlackSignature(
          {
            rawBody: body,
            timestamp: header('x-slack-request-timestamp'),
            signature: header('x-slack-signature'),
          },
          SIGNING_SECRET,
          new Date(),
        );
        res.writeHead(check.ok ? 200 : 401).end();
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    started.push(() => new Promise((resolve) => endpoint.close(resolve)));
    const url = `http://127.0.0.1:${String((endpoint.address() as AddressInfo).port)}/slack/interactivity`;

    const posted = await client.chat.postMessage({
      channel: ALICE.id,
      text: 'Approval needed',
      blocks: [
        section('Approval needed'),
        {
          type: 'actions',
          block_id: 'decide',
          elements: [
            {
              type: 'button',
              action_id: 'approve',
              text: { type: 'plain_text', text: 'Approve' },
              value: 'appr-1',
              style: 'primary',
            },
            {
              type: 'button',
              action_id: 'reject',
              text: { type: 'plain_text', text: 'Reject' },
              value: 'appr-1',
              style: 'danger',
            },
          ],
        },
      ],
    });
    const channel = posted.channel ?? '';
    const ts = posted.ts ?? '';
    const press = { user: ALICE.id, channel, ts, actionId: 'approve' };
    const pressed = await slack.pressButton(press, { url, signingSecret: SIGNING_SECRET });
    expect(pressed.status).toBe(200);
    expect(received[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const payload = interactivityPayload(received[0]?.body ?? '') as BlockActionsPayload;
    expect(payload).toMatchObject({
      type: 'block_actions',
      user: { id: ALICE.id, username: 'alice' },
      container: { type: 'message', message_ts: ts, channel_id: channel, is_ephemeral: false },
      channel: { id: channel, name: 'directmessage' },
      message: { ts, text: 'Approval needed' },
      actions: [
        {
          type: 'button',
          action_id: 'approve',
          block_id: 'decide',
          value: 'appr-1',
          style: 'primary',
        },
      ],
    });
    expect(payload.response_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/actions\//);

    // Signed with another secret, the same press is refused by the endpoint's verifier.
    expect((await slack.pressButton(press, { url, signingSecret: 'not-the-secret' })).status).toBe(
      401,
    );
    // Signed six minutes ago, too.
    const stale = { ...press, timestampSeconds: Math.floor(Date.now() / 1000) - 360 };
    expect((await slack.pressButton(stale, { url, signingSecret: SIGNING_SECRET })).status).toBe(
      401,
    );

    // Only someone who sees the message can press its buttons, and only buttons it has.
    await expect(
      slack.pressButton({ ...press, user: BOB.id }, { url, signingSecret: SIGNING_SECRET }),
    ).rejects.toThrow('cannot see');
    await expect(
      slack.pressButton(
        { ...press, actionId: 'approve_all' },
        { url, signingSecret: SIGNING_SECRET },
      ),
    ).rejects.toThrow('no button');

    // The response URL replaces the message, as Slack documents for replace_original.
    const replaced = await fetch(payload.response_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        replace_original: true,
        text: 'Approved by Alice',
        blocks: [section('Approved')],
      }),
    });
    expect(replaced.status).toBe(200);
    expect(slack.messages().find((m) => m.ts === ts)).toMatchObject({
      text: 'Approved by Alice',
      updates: 1,
    });
    expect((await slack.received('response_url')).at(-1)?.args).toMatchObject({
      replace_original: true,
    });
  });
});

describe('message metadata and conversations.history', () => {
  it('keeps an app’s metadata with its post and answers it from the history only when asked', async () => {
    const posted = await client.chat.postMessage({
      channel: 'C0APPROVERS',
      text: 'with metadata',
      metadata: { event_type: 'gatehouse_test', event_payload: { notice: 'n-1' } },
    });
    await client.chat.postEphemeral({ channel: 'C0APPROVERS', user: ALICE.id, text: 'only alice' });
    const withMetadata = await client.conversations.history({
      channel: 'C0APPROVERS',
      include_all_metadata: true,
      limit: 1,
    });
    expect(withMetadata.messages?.[0]).toMatchObject({
      ts: posted.ts,
      metadata: { event_type: 'gatehouse_test', event_payload: { notice: 'n-1' } },
    });
    const without = await client.conversations.history({ channel: 'C0APPROVERS', limit: 1 });
    expect(without.messages?.[0]?.ts).toBe(posted.ts);
    expect(without.messages?.[0]?.metadata).toBeUndefined();
    const after = await client.conversations.history({ channel: 'C0APPROVERS', oldest: posted.ts });
    expect(after.messages).toEqual([]);
    expect(
      await slackError(
        client.apiCall('chat.postMessage', {
          channel: 'C0APPROVERS',
          text: 'bad metadata',
          metadata: '{"event_type":"has space"}',
        }),
      ),
    ).toBe('invalid_metadata_format');
  });

  it('answer_held carries the method out at once and holds only its answer', async () => {
    const held = slack.inject({ kind: 'answer_held', method: 'chat.postMessage' });
    const posting = client.chat.postMessage({ channel: 'C0APPROVERS', text: 'answer held' });
    await held.met;
    expect(slack.messages().some((m) => m.text === 'answer held')).toBe(true);
    held.release();
    expect((await posting).ok).toBe(true);
  });
});
