import { z } from 'zod';
import { defineAction } from '../types.js';

// Slack answers 200 with `{ok: false, error}` for app-level failures; bodies are kept as they
// come, so callers see Slack's own error codes.

const channel = z
  .string()
  .regex(/^[CGD][A-Z0-9]{2,}$/)
  .meta({ description: 'A conversation id, e.g. C0123456789 (see list_channels)' });
const ts = z
  .string()
  .regex(/^\d{1,12}\.\d{1,9}$/)
  .meta({ description: "A message's `ts`, e.g. 1712345678.123456" });
const cursor = z
  .string()
  .min(1)
  .max(500)
  .optional()
  .meta({ description: '`response_metadata.next_cursor` of the previous page' });
const text = z.string().min(1).max(40_000).meta({ description: 'Message text in Slack mrkdwn' });

// Writes send JSON, which Slack wants declared as UTF-8.
const json = { 'Content-Type': 'application/json; charset=utf-8' };
const post = (method: string, body: unknown) => ({
  method: 'POST' as const,
  path: `/api/${method}`,
  body,
  headers: json,
});

/** Slack Web API: channels, history, and messages posted as the app's bot user. */
export const slackActions = [
  defineAction({
    app: 'slack',
    name: 'list_channels',
    scope: 'read',
    description: 'List channels in the workspace (public ones unless other types are asked for).',
    input: z.strictObject({
      types: z
        .array(z.enum(['public_channel', 'private_channel', 'mpim', 'im']))
        .min(1)
        .optional(),
      exclude_archived: z.boolean().optional(),
      limit: z.number().int().min(1).max(1000).optional(),
      cursor,
    }),
    request: ({ types, ...query }) => ({
      method: 'GET',
      path: '/api/conversations.list',
      query: { ...query, types: types?.join(',') },
    }),
  }),
  defineAction({
    app: 'slack',
    name: 'get_channel_history',
    scope: 'read',
    description: 'Read recent messages of a channel, newest first, optionally within a time range.',
    input: z.strictObject({
      channel,
      oldest: ts.optional().meta({ description: 'Only messages after this ts' }),
      latest: ts.optional().meta({ description: 'Only messages before this ts' }),
      inclusive: z.boolean().optional(),
      limit: z.number().int().min(1).max(999).optional(),
      cursor,
    }),
    request: (query) => ({ method: 'GET', path: '/api/conversations.history', query }),
  }),
  defineAction({
    app: 'slack',
    name: 'get_thread_replies',
    scope: 'read',
    description: 'Read a thread: its parent message and the replies to it.',
    input: z.strictObject({
      channel,
      ts: ts.meta({ description: "The thread's parent message ts" }),
      limit: z.number().int().min(1).max(999).optional(),
      cursor,
    }),
    request: (query) => ({ method: 'GET', path: '/api/conversations.replies', query }),
  }),
  defineAction({
    app: 'slack',
    name: 'post_message',
    scope: 'write',
    description: 'Post a message to a channel, or reply in a thread.',
    input: z.strictObject({
      channel: z
        .string()
        .regex(/^(?:[CGD][A-Z0-9]{2,}|#[a-z0-9][a-z0-9._-]{0,79})$/)
        .meta({ description: 'A conversation id (C0123456789) or a channel name (#general)' }),
      text,
      thread_ts: ts.optional().meta({ description: 'Reply in the thread of this message' }),
      reply_broadcast: z
        .boolean()
        .optional()
        .meta({ description: 'Also show a thread reply in the channel' }),
      unfurl_links: z.boolean().optional(),
    }),
    request: (input) => post('chat.postMessage', input),
  }),
  defineAction({
    app: 'slack',
    name: 'update_message',
    scope: 'write',
    description: "Replace the text of a message the app's bot posted.",
    input: z.strictObject({ channel, ts, text }),
    request: (input) => post('chat.update', input),
  }),
  defineAction({
    app: 'slack',
    name: 'delete_message',
    scope: 'destructive',
    description: "Delete a message the app's bot posted.",
    input: z.strictObject({ channel, ts }),
    request: (input) => post('chat.delete', input),
  }),
  defineAction({
    app: 'slack',
    name: 'add_reaction',
    scope: 'write',
    description: 'Add an emoji reaction to a message.',
    input: z.strictObject({
      channel,
      timestamp: ts,
      name: z
        .string()
        .regex(/^[a-z0-9_+'-]{1,100}(?:::skin-tone-[2-6])?$/)
        .meta({ description: 'Emoji name without colons, e.g. thumbsup or white_check_mark' }),
    }),
    request: (input) => post('reactions.add', input),
  }),
];
