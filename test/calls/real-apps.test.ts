import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { saveAuthorizedConnection } from '../../activities/db/connections.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A catalog app other than the demo app, through the whole call path: APP_URLS points Slack's
 * Web API at a loopback server that answers as Slack documents (200 with `ok`), and records
 * what it received.
 */
interface Received {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

let stack: CallStack;
let slack: http.Server;
const received: Received[] = [];

const started = stopsAfterAll();

beforeAll(async () => {
  slack = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as { channel?: string }) : null;
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(
        JSON.stringify(
          body?.channel === 'C0123456789'
            ? { ok: true, channel: body.channel, ts: '1712345678.000100' }
            : { ok: false, error: 'channel_not_found' },
        ),
      );
    });
  });
  started.push(() => new Promise((resolve) => slack.close(resolve)));
  await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
  const { port } = slack.address() as AddressInfo;
  stack = started.add(
    await startCallStack({ appUrls: { slack: `http://127.0.0.1:${String(port)}` } }),
  );
  const user = await upsertConnectedUser(stack.db.sql, stack.environmentId, 'u_slack', undefined);
  await saveAuthorizedConnection(stack.db.sql, stack.config.encryption, {
    environmentId: stack.environmentId,
    connectedUserId: user.id,
    app: 'slack',
    authConfigId: null,
    tokens: { accessToken: 'xoxb-test-token', refreshToken: null, expiresAt: null },
    grantedScopes: ['read', 'write'],
    providerScopes: ['channels:read', 'chat:write'],
  });
  await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
});

describe('slack.post_message against Slack at a configured address', () => {
  it("sends Slack's request with the user's token and answers {ok: true, data}", async () => {
    const answer = await stack.run('slack.post_message', {
      user: 'u_slack',
      input: { channel: 'C0123456789', text: 'hello from Gatehouse' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      data: { ok: true, channel: 'C0123456789', ts: '1712345678.000100' },
    });
    expect(received.at(-1)).toEqual({
      method: 'POST',
      path: '/api/chat.postMessage',
      authorization: 'Bearer xoxb-test-token',
      contentType: 'application/json; charset=utf-8',
      body: { channel: 'C0123456789', text: 'hello from Gatehouse' },
    });
  });

  it("answers Slack's failure inside a 200 as {ok: false, data, upstream_status}", async () => {
    const before = received.length;
    const answer = await stack.run('slack.post_message', {
      user: 'u_slack',
      input: { channel: 'C0GONE00000', text: 'nobody home' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: false,
      data: { ok: false, error: 'channel_not_found' },
      upstream_status: 200,
    });
    // A write the app refused is not tried again.
    expect(received.length - before).toBe(1);
  });
});
