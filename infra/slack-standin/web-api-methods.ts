import { z } from 'zod';
import { blockKitProblems } from './block-kit-limits.js';
import {
  APP,
  messageObject,
  TEAM,
  userObject,
  type Conversation,
  type MessageMetadata,
  type Workspace,
} from './workspace.js';

/**
 * The Web API methods Gatehouse uses, answered as Slack's method reference documents them
 * (docs.slack.dev/reference/methods/<method>): a JSON object with `ok: true` and the method's
 * fields, or `ok: false` and an `error` code from the method's documented errors. Arguments arrive
 * as strings when form-encoded (`blocks` then holds JSON text) or as JSON values.
 */

export type SlackAnswer = { ok: true } & Record<string, unknown>;
export type SlackError = { ok: false; error: string } & Record<string, unknown>;
type Args = Record<string, unknown>;

const fail = (error: string, extra: Record<string, unknown> = {}): SlackError => ({
  ok: false,
  error,
  ...extra,
});

/** Slack's answer to an argument it needs and did not get (or could not read). */
const invalidArguments = (error: z.ZodError): SlackError =>
  fail('invalid_arguments', {
    response_metadata: {
      messages: error.issues.map(
        (issue) => `[ERROR] ${issue.message} [json-pointer:/${issue.path.join('/')}]`,
      ),
    },
  });

/** A form field is text; `true`, `1` and JSON's true all mean true, as Slack reads them. */
const flag = z
  .union([z.boolean(), z.string()])
  .optional()
  .transform((value) => value === true || value === 'true' || value === '1');

const text = z.string().optional();

/** `blocks` as JSON text (a form) or an array (JSON): the parsed array, or the error to answer. */
function readBlocks(raw: unknown): unknown[] | SlackError {
  if (raw === undefined || raw === '') return [];
  let blocks: unknown = raw;
  if (typeof raw === 'string') {
    try {
      blocks = JSON.parse(raw);
    } catch {
      return fail('invalid_blocks_format');
    }
  }
  if (!Array.isArray(blocks)) return fail('invalid_blocks_format');
  const problems = blockKitProblems(blocks);
  // Slack names each broken block in `errors`; the stand-in gives its own reading of why.
  return problems.length > 0 ? fail('invalid_blocks', { errors: problems }) : blocks;
}

/**
 * Slack's chat.postMessage reference advises keeping text under 4,000 characters, says text
 * beyond 40,000 is truncated, and lists `msg_too_long` among the method's errors. The stand-in
 * refuses beyond 40,000 with that error, so a sender that would lose text is noticed (README).
 */
const MESSAGE_TEXT_MAX = 40_000;

interface Content {
  text: string;
  blocks: unknown[];
}

/** The message's text and blocks, or the error Slack answers for them. */
function readContent(args: Args): Content | SlackError {
  const blocks = readBlocks(args.blocks);
  if (!Array.isArray(blocks)) return blocks;
  const messageText = typeof args.text === 'string' ? args.text : '';
  if (messageText === '' && blocks.length === 0) return fail('no_text');
  if (Array.from(messageText).length > MESSAGE_TEXT_MAX) return fail('msg_too_long');
  return { text: messageText, blocks };
}

const isError = (value: unknown): value is SlackError =>
  typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;

/**
 * Where chat.postMessage posts: a conversation by id or name, or, for a user's id, the app's
 * direct message with that person (Slack opens it), answered with that conversation's id.
 */
function postTarget(workspace: Workspace, channel: string): Conversation | SlackError {
  if (/^[UW]/.test(channel)) {
    if (!workspace.user(channel)) return fail('channel_not_found');
    return workspace.openConversation([channel])[0];
  }
  return workspace.conversation(channel) ?? fail('channel_not_found');
}

type Method = (workspace: Workspace, args: Args) => SlackAnswer | SlackError;

const metadataSchema = z.object({
  event_type: z.string().regex(/^[a-zA-Z0-9_]{1,255}$/),
  event_payload: z.record(z.string(), z.unknown()),
});

/**
 * chat.postMessage's `metadata`: a JSON object with `event_type` and `event_payload`, sent as JSON
 * text in a form. Slack answers `invalid_metadata_format` for anything else.
 */
function readMetadata(raw: unknown): MessageMetadata | null | SlackError {
  if (raw === undefined || raw === '') return null;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return fail('invalid_metadata_format');
    }
  }
  const parsed = metadataSchema.safeParse(value);
  return parsed.success ? parsed.data : fail('invalid_metadata_format');
}

const authTest: Method = () => ({
  ok: true,
  url: `https://${TEAM.domain}.slack.com/`,
  team: TEAM.name,
  user: 'gatehouse',
  team_id: TEAM.id,
  user_id: APP.botUserId,
  bot_id: APP.botId,
  is_enterprise_install: false,
});

const usersInfo: Method = (workspace, args) => {
  const parsed = z.object({ user: z.string().min(1) }).safeParse(args);
  if (!parsed.success) return invalidArguments(parsed.error);
  const user = workspace.user(parsed.data.user);
  return user ? { ok: true, user: userObject(user) } : fail('user_not_found');
};

const usersLookupByEmail: Method = (workspace, args) => {
  const parsed = z.object({ email: z.string().min(1) }).safeParse(args);
  if (!parsed.success) return invalidArguments(parsed.error);
  const user = workspace.userByEmail(parsed.data.email);
  return user ? { ok: true, user: userObject(user) } : fail('users_not_found');
};

const conversationsOpen: Method = (workspace, args) => {
  const parsed = z
    .object({ users: z.string().optional(), channel: z.string().optional(), return_im: flag })
    .safeParse(args);
  if (!parsed.success) return invalidArguments(parsed.error);
  const { users, channel, return_im: returnIm } = parsed.data;
  let conversation: Conversation;
  let opened = false;
  if (users !== undefined && users !== '') {
    const ids = users.split(',').map((id) => id.trim());
    if (ids.length > 8) return fail('too_many_users');
    if (ids.some((id) => !workspace.user(id))) return fail('user_not_found');
    [conversation, opened] = workspace.openConversation(ids);
  } else if (channel !== undefined && channel !== '') {
    const found = workspace.conversation(channel);
    if (!found || found.kind === 'channel') return fail('channel_not_found');
    conversation = found;
  } else {
    return fail('users_list_not_supplied');
  }
  const full = {
    id: conversation.id,
    created: conversation.created,
    is_im: conversation.kind === 'im',
    is_mpim: conversation.kind === 'mpim',
    ...(conversation.kind === 'im' ? { user: conversation.members[0] } : {}),
  };
  return {
    ok: true,
    ...(opened ? {} : { no_op: true, already_open: true }),
    channel: returnIm ? full : { id: conversation.id },
  };
};

const chatPostMessage: Method = (workspace, args) => {
  const parsed = z
    .object({ channel: z.string().min(1), text, thread_ts: z.string().optional() })
    .safeParse(args);
  if (!parsed.success) return fail('channel_not_found');
  const target = postTarget(workspace, parsed.data.channel);
  if (isError(target)) return target;
  const content = readContent(args);
  if (isError(content)) return content;
  const metadata = readMetadata(args.metadata);
  if (isError(metadata)) return metadata;
  const message = workspace.post({
    channel: target.id,
    ...content,
    threadTs: parsed.data.thread_ts ?? null,
    ephemeralFor: null,
    metadata,
  });
  return { ok: true, channel: target.id, ts: message.ts, message: messageObject(message) };
};

const chatUpdate: Method = (workspace, args) => {
  const parsed = z.object({ channel: z.string().min(1), ts: z.string().min(1) }).safeParse(args);
  if (!parsed.success) return invalidArguments(parsed.error);
  // chat.update takes the conversation's id (the one chat.postMessage answered), not a user's.
  const conversation = workspace.conversation(parsed.data.channel);
  if (!conversation) return fail('channel_not_found');
  const message = workspace.message(conversation.id, parsed.data.ts);
  if (!message || message.ephemeralFor !== null) return fail('message_not_found');
  const content = readContent(args);
  if (isError(content)) return content;
  message.text = content.text;
  message.blocks = content.blocks;
  message.updates += 1;
  return {
    ok: true,
    channel: conversation.id,
    ts: message.ts,
    text: message.text,
    message: messageObject(message),
  };
};

const chatPostEphemeral: Method = (workspace, args) => {
  const parsed = z
    .object({ channel: z.string().min(1), user: z.string().min(1), text })
    .safeParse(args);
  if (!parsed.success) return invalidArguments(parsed.error);
  const conversation = workspace.conversation(parsed.data.channel);
  if (!conversation) return fail('channel_not_found');
  if (!workspace.user(parsed.data.user)) return fail('user_not_found');
  if (!conversation.members.includes(parsed.data.user)) return fail('user_not_in_channel');
  const content = readContent(args);
  if (isError(content)) return content;
  const message = workspace.post({
    channel: conversation.id,
    ...content,
    threadTs: null,
    ephemeralFor: parsed.data.user,
  });
  return { ok: true, message_ts: message.ts };
};

/**
 * conversations.history: a conversation's messages, newest first, between `oldest` and `latest`
 * (exclusive unless `inclusive`), at most `limit` (default 100, at most 999); ephemeral messages
 * are nobody's history. Metadata comes along only with `include_all_metadata`.
 */
const conversationsHistory: Method = (workspace, args) => {
  const parsed = z
    .object({
      channel: z.string().min(1),
      oldest: z.coerce.number().optional(),
      latest: z.coerce.number().optional(),
      inclusive: flag,
      limit: z.coerce.number().int().min(1).max(999).optional(),
      include_all_metadata: flag,
    })
    .safeParse(args);
  if (!parsed.success) return invalidArguments(parsed.error);
  const {
    channel,
    oldest,
    latest,
    inclusive,
    limit,
    include_all_metadata: withMetadata,
  } = parsed.data;
  const conversation = workspace.conversation(channel);
  if (!conversation) return fail('channel_not_found');
  const after = (ts: number) =>
    oldest === undefined ? true : inclusive ? ts >= oldest : ts > oldest;
  const before = (ts: number) =>
    latest === undefined ? true : inclusive ? ts <= latest : ts < latest;
  const messages = workspace
    .allMessages()
    .filter(
      (m) =>
        m.channel === conversation.id &&
        !m.deleted &&
        m.ephemeralFor === null &&
        after(Number(m.ts)) &&
        before(Number(m.ts)),
    )
    .reverse();
  const page = messages.slice(0, limit ?? 100);
  return {
    ok: true,
    messages: page.map((m) => ({
      ...messageObject(m),
      ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
    })),
    has_more: messages.length > page.length,
  };
};

export const METHODS: ReadonlyMap<string, Method> = new Map([
  ['conversations.history', conversationsHistory],
  ['auth.test', authTest],
  ['users.info', usersInfo],
  ['users.lookupByEmail', usersLookupByEmail],
  ['conversations.open', conversationsOpen],
  ['chat.postMessage', chatPostMessage],
  ['chat.update', chatUpdate],
  ['chat.postEphemeral', chatPostEphemeral],
]);
