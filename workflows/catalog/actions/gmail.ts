import { z } from 'zod';
import { defineAction } from '../types.js';
import { rawMessage } from './gmail-mime.js';

const messageId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/)
  .meta({ description: 'A message id from list_messages' });
const threadId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/)
  .meta({ description: 'The thread to add the message to (a reply also needs inReplyTo)' });
const labelId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/)
  .meta({ description: 'A label id, e.g. INBOX, UNREAD, STARRED or Label_12 (see list_labels)' });
const addresses = z.array(z.email()).max(100);
const message = {
  to: addresses.min(1).meta({ description: 'Recipient addresses' }),
  cc: addresses.optional(),
  bcc: addresses.optional(),
  subject: z
    .string()
    .max(998)
    .regex(/^[^\r\n]*$/, 'One line')
    .meta({ description: 'Any Unicode text on one line' }),
  body: z.string().max(100_000).meta({ description: 'Plain-text body' }),
  inReplyTo: z
    .string()
    .regex(/^<[^<>\s]{1,994}>$/)
    .optional()
    .meta({ description: 'Message-ID header of the message replied to, e.g. <abc@mail.com>' }),
};
const outgoing = z.strictObject({ ...message, threadId: threadId.optional() });
type Outgoing = z.infer<typeof outgoing>;
const gmailMessage = ({ threadId, ...rest }: Outgoing) => ({ raw: rawMessage(rest), threadId });

const messagesPath = '/gmail/v1/users/me/messages';
const messagePath = (id: string) => `${messagesPath}/${encodeURIComponent(id)}`;

/** Gmail API v1: the user's mailbox. */
export const gmailActions = [
  defineAction({
    app: 'gmail',
    name: 'list_messages',
    scope: 'read',
    description: 'List message ids matching a Gmail search (ids only; get_message reads one).',
    input: z.strictObject({
      q: z
        .string()
        .min(1)
        .max(2048)
        .optional()
        .meta({ description: 'Gmail search syntax, e.g. "from:ana@example.com is:unread"' }),
      labelIds: labelId.optional().meta({ description: 'Only messages with this label' }),
      maxResults: z.number().int().min(1).max(500).optional(),
      pageToken: z.string().min(1).max(1024).optional(),
      includeSpamTrash: z.boolean().optional(),
    }),
    request: (query) => ({ method: 'GET', path: messagesPath, query }),
  }),
  defineAction({
    app: 'gmail',
    name: 'get_message',
    scope: 'read',
    description: 'Get one message: headers and body parts (full), headers only, or ids only.',
    input: z.strictObject({
      id: messageId,
      format: z.enum(['full', 'metadata', 'minimal', 'raw']).optional(),
    }),
    request: ({ id, format }) => ({ method: 'GET', path: messagePath(id), query: { format } }),
  }),
  defineAction({
    app: 'gmail',
    name: 'send_message',
    scope: 'write',
    description: 'Send a plain-text email from the user.',
    input: outgoing,
    request: (input) => ({
      method: 'POST',
      path: `${messagesPath}/send`,
      body: gmailMessage(input),
    }),
  }),
  defineAction({
    app: 'gmail',
    name: 'create_draft',
    scope: 'write',
    description: "Save a plain-text email in the user's drafts without sending it.",
    input: outgoing,
    request: (input) => ({
      method: 'POST',
      path: '/gmail/v1/users/me/drafts',
      body: { message: gmailMessage(input) },
    }),
  }),
  defineAction({
    app: 'gmail',
    name: 'modify_labels',
    scope: 'write',
    description: 'Add or remove labels of a message (e.g. remove UNREAD to mark it read).',
    input: z
      .strictObject({
        id: messageId,
        addLabelIds: z.array(labelId).max(100).optional(),
        removeLabelIds: z.array(labelId).max(100).optional(),
      })
      .refine(
        (input) => (input.addLabelIds?.length ?? 0) + (input.removeLabelIds?.length ?? 0) > 0,
        'Nothing to change',
      ),
    request: ({ id, ...body }) => ({ method: 'POST', path: `${messagePath(id)}/modify`, body }),
  }),
  defineAction({
    app: 'gmail',
    name: 'trash_message',
    scope: 'destructive',
    description: 'Move a message to the trash, where Gmail deletes it for good after 30 days.',
    input: z.strictObject({ id: messageId }),
    request: ({ id }) => ({ method: 'POST', path: `${messagePath(id)}/trash` }),
  }),
  defineAction({
    app: 'gmail',
    name: 'list_labels',
    scope: 'read',
    description: "List the mailbox's labels, system and user-made, with their ids.",
    input: z.strictObject({}),
    request: () => ({ method: 'GET', path: '/gmail/v1/users/me/labels' }),
  }),
];
