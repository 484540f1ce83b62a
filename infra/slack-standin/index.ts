import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { Faults, type FaultHandle, type SlackFault } from './faults.js';
import {
  signedInteractivityRequest,
  type BlockActionsPayload,
  type SignedSlackRequest,
} from './interactivity-request.js';
import { METHODS, type SlackAnswer, type SlackError } from './web-api-methods.js';
import {
  APP,
  messageObject,
  nowSeconds,
  seededUserSchema,
  TEAM,
  Workspace,
  type SeededChannel,
  type SeededUserInput,
  type StoredMessage,
} from './workspace.js';

export type { FaultHandle, SlackFault } from './faults.js';
export type { SeededChannel, SeededUser, SeededUserInput, StoredMessage } from './workspace.js';
export { blockKitProblems, MESSAGE_BLOCKS_MAX } from './block-kit-limits.js';
export {
  interactivityPayload,
  signedInteractivityRequest,
  slackSignature,
  type BlockActionsPayload,
  type SignedSlackRequest,
} from './interactivity-request.js';

export interface SlackStandinOptions {
  /** The workspace's people (ids `U…`/`W…`, e-mail, name). */
  users: SeededUserInput[];
  /** The bot token the app was given; every call must present it. */
  token: string;
  /** Channels the app may post in, with their members; direct messages need none. */
  channels?: SeededChannel[];
  /** Where button presses go, signed with the app's signing secret (or pass them to a press). */
  interactivity?: InteractivityTarget;
}

export interface InteractivityTarget {
  url: string;
  signingSecret: string;
}

/** One request the stand-in received and what it answered. */
export interface RecordedCall {
  /** The Web API method (`chat.postMessage`), or `response_url` for a response URL. */
  method: string;
  httpMethod: string;
  contentType: string | null;
  /** How the token came: the Authorization header, a `token` argument, or not at all. */
  tokenFrom: 'header' | 'argument' | 'none';
  /** The arguments as Slack reads them (`blocks` parsed), without the token. */
  args: Record<string, unknown>;
  status: number;
  /** The JSON answered (null for a 5xx, which has a plain body). */
  answer: SlackAnswer | SlackError | null;
  /** The fault the request met, if any. */
  fault: SlackFault['kind'] | null;
}

export interface ButtonPress {
  /** Who presses: a seeded user who can see the message. */
  user: string;
  /** The message, by the conversation id and `ts` chat.postMessage answered. */
  channel: string;
  ts: string;
  /** The button's action_id: the press carries that button's value, as the message holds it. */
  actionId: string;
  /** When Slack signs it (Unix seconds; now by default). */
  timestampSeconds?: number;
}

export interface ButtonPressed {
  /** What the app's interactivity endpoint answered. */
  status: number;
  body: string;
  /** The request sent, exactly: to send it again (a replay) or alter it (tampering). */
  request: SignedSlackRequest;
  payload: BlockActionsPayload;
}

export interface SlackStandin {
  /** Base URL of the Web API, ending in `/api/`: `WebClient`'s `slackApiUrl`. */
  url: string;
  calls(): RecordedCall[];
  /** Resolves once `count` calls of `method` have been answered, with them. */
  received(method: string, count?: number): Promise<RecordedCall[]>;
  /** Every message posted, as now (updated, deleted, ephemeral), oldest first. */
  messages(): StoredMessage[];
  inject(fault: SlackFault): FaultHandle;
  /** Presses a button of a posted message as a person in Slack would, signed as Slack signs. */
  pressButton(press: ButtonPress, target?: InteractivityTarget): Promise<ButtonPressed>;
  close(): Promise<void>;
}

const BODY_LIMIT_BYTES = 1024 * 1024;

interface ResponseUrl {
  channel: string;
  ts: string;
  user: string;
}

/**
 * A local stand-in for Slack's Web API, built from Slack's published documentation because no
 * Slack workspace is reachable from the machines Gatehouse is built on. See README.md here.
 */
export async function startSlackStandin(options: SlackStandinOptions): Promise<SlackStandin> {
  const users = z.array(seededUserSchema).parse(options.users);
  const token = z.string().min(1).parse(options.token);
  const workspace = new Workspace(users, options.channels ?? []);
  const faults = new Faults();
  const recorded: RecordedCall[] = [];
  const waiters: { method: string; count: number; resolve: (calls: RecordedCall[]) => void }[] = [];
  const responseUrls = new Map<string, ResponseUrl>();
  let origin = '';

  const callsOf = (method: string): RecordedCall[] => recorded.filter((c) => c.method === method);

  const record = (call: RecordedCall): void => {
    recorded.push(call);
    for (const waiter of [...waiters]) {
      const calls = callsOf(waiter.method);
      if (calls.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(calls);
      }
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A fault of the stand-in itself: say so loudly rather than answer as Slack would.
      console.error('slack stand-in: request failed', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('slack stand-in failed');
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin.invalid');
    const raw = await readBody(req);
    if (url.pathname.startsWith('/api/')) {
      await webApiCall(req, res, url, raw);
      return;
    }
    const responseUrl = responseUrls.get(url.pathname);
    if (req.method === 'POST' && responseUrl) {
      answerResponseUrl(req, res, responseUrl, raw);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }

  async function webApiCall(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: Buffer | null,
  ): Promise<void> {
    const method = decodeURIComponent(url.pathname.slice('/api/'.length));
    const contentType = req.headers['content-type'] ?? null;
    const base = { method, httpMethod: req.method ?? 'GET', contentType };
    const read = readArguments(url, contentType, raw);
    const { token: argumentToken, ...args } = 'error' in read ? { token: undefined } : read.args;
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const tokenFrom = bearer ? 'header' : typeof argumentToken === 'string' ? 'argument' : 'none';
    const call = { ...base, tokenFrom, args: asRead(args) } as const;

    const fault = faults.take(method);
    if (fault?.settings.kind === 'rate_limited') {
      const answer: SlackError = { ok: false, error: 'ratelimited' };
      const retryAfter = String(fault.settings.retryAfterSeconds);
      send(res, 429, answer, { 'retry-after': retryAfter });
      record({ ...call, status: 429, answer, fault: 'rate_limited' });
      return;
    }
    if (fault?.settings.kind === 'server_error') {
      const { status } = fault.settings;
      res.writeHead(status, { 'content-type': 'text/plain' }).end('Slack is having trouble');
      record({ ...call, status, answer: null, fault: 'server_error' });
      return;
    }
    if (fault?.settings.kind === 'delay') await sleep(fault.settings.ms);
    if (fault?.settings.kind === 'hold') await fault.released;

    let answer: SlackAnswer | SlackError;
    if ('error' in read) answer = { ok: false, error: read.error };
    else if (tokenFrom === 'none') answer = { ok: false, error: 'not_authed' };
    else if ((bearer ?? argumentToken) !== token) answer = { ok: false, error: 'invalid_auth' };
    else answer = METHODS.get(method)?.(workspace, args) ?? { ok: false, error: 'unknown_method' };
    if (fault?.settings.kind === 'answer_held') await fault.released;
    // Slack answers its errors with HTTP 200 too; only `ok` says which it was.
    send(res, 200, answer);
    record({ ...call, status: 200, answer, fault: fault?.settings.kind ?? null });
  }

  function answerResponseUrl(
    req: IncomingMessage,
    res: ServerResponse,
    target: ResponseUrl,
    raw: Buffer | null,
  ): void {
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(raw?.toString('utf8') ?? '');
      if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
    } catch {
      body = {};
    }
    const message = workspace.message(target.channel, target.ts);
    const blocks = Array.isArray(body.blocks) ? (body.blocks as unknown[]) : [];
    const text = typeof body.text === 'string' ? body.text : '';
    if (body.delete_original === true && message) message.deleted = true;
    else if (body.replace_original === true && message) {
      message.text = text;
      message.blocks = blocks;
      message.updates += 1;
    } else if (text !== '' || blocks.length > 0) {
      const inChannel = body.response_type === 'in_channel';
      workspace.post({
        channel: target.channel,
        text,
        blocks,
        threadTs: null,
        ephemeralFor: inChannel ? null : target.user,
      });
    }
    const answer: SlackAnswer = { ok: true };
    send(res, 200, answer);
    record({
      method: 'response_url',
      httpMethod: req.method ?? 'POST',
      contentType: req.headers['content-type'] ?? null,
      tokenFrom: 'none',
      args: body,
      status: 200,
      answer,
      fault: null,
    });
  }

  async function pressButton(
    press: ButtonPress,
    target: InteractivityTarget | undefined = options.interactivity,
  ): Promise<ButtonPressed> {
    if (!target) throw new Error('pressButton: no interactivity URL and signing secret');
    const user = workspace.user(press.user);
    if (!user) throw new Error(`pressButton: no user ${press.user} in the workspace`);
    const conversation = workspace.conversation(press.channel);
    const message = workspace.message(press.channel, press.ts);
    if (!conversation || !message) {
      throw new Error(`pressButton: no message ${press.ts} in ${press.channel}`);
    }
    const visible =
      message.ephemeralFor === null
        ? conversation.members.includes(user.id)
        : message.ephemeralFor === user.id;
    if (!visible) throw new Error(`pressButton: ${user.id} cannot see that message`);
    const found = findButton(message.blocks, press.actionId);
    if (!found) throw new Error(`pressButton: the message has no button ${press.actionId}`);

    const path = `/actions/${TEAM.id}/${digits(13)}/${randomBytes(12).toString('hex')}`;
    responseUrls.set(path, { channel: conversation.id, ts: message.ts, user: user.id });
    const payload: BlockActionsPayload = {
      type: 'block_actions',
      team: { id: TEAM.id, domain: TEAM.domain },
      user: { id: user.id, username: user.name, name: user.name, team_id: TEAM.id },
      api_app_id: APP.id,
      token: 'verification-token-deprecated',
      container: {
        type: 'message',
        message_ts: message.ts,
        channel_id: conversation.id,
        is_ephemeral: message.ephemeralFor !== null,
      },
      trigger_id: `${digits(13)}.${digits(13)}.${randomBytes(16).toString('hex')}`,
      // Slack names a direct message "directmessage" in interaction payloads.
      channel: {
        id: conversation.id,
        name: conversation.kind === 'channel' ? conversation.name : 'directmessage',
      },
      enterprise: null,
      is_enterprise_install: false,
      message: messageObject(message),
      state: { values: {} },
      response_url: `${origin}${path}`,
      actions: [{ ...found.button, block_id: found.blockId, action_ts: workspace.nextTs() }],
    };
    const request = signedInteractivityRequest(
      payload,
      target.signingSecret,
      press.timestampSeconds ?? nowSeconds(),
    );
    const answer = await fetch(target.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
    });
    return { status: answer.status, body: await answer.text(), request, payload };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${String(port)}`;

  return {
    url: `${origin}/api/`,
    calls: () => structuredClone(recorded),
    received: (method, count = 1) => {
      const calls = callsOf(method);
      if (calls.length >= count) return Promise.resolve(structuredClone(calls));
      return new Promise((resolve) => {
        waiters.push({
          method,
          count,
          resolve: (found) => {
            resolve(structuredClone(found));
          },
        });
      });
    },
    messages: () => workspace.allMessages(),
    inject: (fault) => faults.inject(fault),
    pressButton,
    close: () =>
      new Promise<void>((resolve) => {
        faults.releaseAll();
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

type Arguments = { args: Record<string, unknown> } | { error: string };

/**
 * The call's arguments as Slack reads them: the query string, then the body, form-encoded or
 * JSON (an object). Slack's documented errors for a body it cannot read: `invalid_json`,
 * `json_not_object`, `invalid_post_type` for another media type and `missing_post_type` for a
 * body without one.
 */
function readArguments(url: URL, contentType: string | null, raw: Buffer | null): Arguments {
  const args: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (raw === null || raw.length === 0) return { args };
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const text = raw.toString('utf8');
  if (mediaType === 'application/x-www-form-urlencoded') {
    return { args: { ...args, ...Object.fromEntries(new URLSearchParams(text)) } };
  }
  if (mediaType === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { error: 'invalid_json' };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return { error: 'json_not_object' };
    }
    // Slack takes a JSON body's token only from the Authorization header.
    const body = { ...(parsed as Record<string, unknown>) };
    delete body.token;
    return { args: { ...args, ...body } };
  }
  return { error: mediaType === '' ? 'missing_post_type' : 'invalid_post_type' };
}

/** The arguments for the record: `blocks` sent as JSON text (a form) parsed, as Slack reads it. */
function asRead(args: Record<string, unknown>): Record<string, unknown> {
  if (typeof args.blocks !== 'string') return args;
  try {
    return { ...args, blocks: JSON.parse(args.blocks) as unknown };
  } catch {
    return args;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        reject(new Error(`slack stand-in: a body over ${String(BODY_LIMIT_BYTES)} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolve(chunks.length === 0 ? null : Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function send(
  res: ServerResponse,
  status: number,
  body: SlackAnswer | SlackError,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
    .end(JSON.stringify(body));
}

interface FoundButton {
  blockId: string;
  button: Omit<BlockActionsPayload['actions'][number], 'block_id' | 'action_ts'>;
}

/** The button with this action_id in an actions block (or a section's accessory). */
function findButton(blocks: unknown[], actionId: string): FoundButton | undefined {
  for (const [index, block] of blocks.entries()) {
    if (typeof block !== 'object' || block === null) continue;
    const { block_id: blockId, elements, accessory } = block as Record<string, unknown>;
    const candidates: unknown[] = [
      ...(Array.isArray(elements) ? (elements as unknown[]) : []),
      accessory,
    ];
    for (const element of candidates) {
      const button = element as Record<string, unknown> | undefined;
      if (button?.type !== 'button' || button.action_id !== actionId) continue;
      const label = button.text as { text?: unknown } | undefined;
      return {
        // Slack makes up a block_id when the app sent none.
        blockId: typeof blockId === 'string' ? blockId : `b${String(index)}`,
        button: {
          type: 'button',
          action_id: actionId,
          text: { type: 'plain_text', text: typeof label?.text === 'string' ? label.text : '' },
          ...(typeof button.value === 'string' ? { value: button.value } : {}),
          ...(typeof button.url === 'string' ? { url: button.url } : {}),
          ...(button.style === 'primary' || button.style === 'danger'
            ? { style: button.style }
            : {}),
        },
      };
    }
  }
  return undefined;
}

function digits(count: number): string {
  return Array.from(randomBytes(count), (byte) => String(byte % 10)).join('');
}
