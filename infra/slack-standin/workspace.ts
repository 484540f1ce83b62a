import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** A person of the stand-in's workspace, as a test seeds them. */
export const seededUserSchema = z.object({
  id: z.string().regex(/^[UW][A-Z0-9]{2,}$/, 'a Slack user id (U… or W…)'),
  email: z.email(),
  /** The handle (`name`); the real name defaults to it. */
  name: z.string().min(1),
  realName: z.string().min(1).optional(),
  /**
   * Whether the person confirmed their e-mail with Slack (users.info's `is_email_confirmed`):
   * an address nobody confirmed says nothing about who the person is.
   */
  emailConfirmed: z.boolean().default(true),
});
export type SeededUser = z.infer<typeof seededUserSchema>;
/** A person as a test gives them (`emailConfirmed` defaults to true). */
export type SeededUserInput = z.input<typeof seededUserSchema>;

/** A channel the app may post in, with the people in it. */
export const seededChannelSchema = z.object({
  id: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'a Slack channel id (C… or G…)'),
  name: z.string().min(1),
  members: z.array(z.string()).default([]),
});
export type SeededChannel = z.input<typeof seededChannelSchema>;

/** The workspace and the app installed in it, fixed for the stand-in's life. */
export const TEAM = { id: 'T0GATEHOUSE', domain: 'gatehouse-standin', name: 'Gatehouse Stand-in' };
export const APP = { id: 'A0GATEHOUSE', botId: 'B0GATEHOUSE', botUserId: 'U0GATEBOT' };

export interface Conversation {
  id: string;
  name: string;
  kind: 'channel' | 'im' | 'mpim';
  members: string[];
  created: number;
}

/** A message as the stand-in keeps it: what the app posted, as later updated. */
export interface StoredMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
  threadTs: string | null;
  /** Shown to this user only (chat.postEphemeral, or an ephemeral answer to a response URL). */
  ephemeralFor: string | null;
  /** How many times chat.update (or a response URL) replaced it. */
  updates: number;
  deleted: boolean;
  /** The app's message metadata (chat.postMessage's `metadata`), or null. */
  metadata: MessageMetadata | null;
}

/** Slack's message metadata: an app's own event type and payload, kept with the message. */
export interface MessageMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/**
 * The workspace's people, conversations and messages. Slack timestamps (`ts`) are
 * `<seconds>.<6 digits>`, unique within a channel; a counter makes them unique and increasing
 * here whatever the clock does.
 */
export class Workspace {
  readonly users: readonly SeededUser[];
  private readonly conversations = new Map<string, Conversation>();
  private readonly messages: StoredMessage[] = [];
  private sequence = 0;

  constructor(users: readonly SeededUser[], channels: readonly SeededChannel[]) {
    this.users = users;
    for (const channel of channels.map((c) => seededChannelSchema.parse(c))) {
      this.conversations.set(channel.id, {
        ...channel,
        kind: channel.id.startsWith('G') ? 'mpim' : 'channel',
        created: nowSeconds(),
      });
    }
  }

  user(id: string): SeededUser | undefined {
    return this.users.find((user) => user.id === id);
  }

  /** Slack compares e-mail addresses without regard to case. */
  userByEmail(email: string): SeededUser | undefined {
    const wanted = email.toLowerCase();
    return this.users.find((user) => user.email.toLowerCase() === wanted);
  }

  /** By id, or by name as `#name` or `name` (chat.postMessage takes either). */
  conversation(idOrName: string): Conversation | undefined {
    const byId = this.conversations.get(idOrName);
    if (byId) return byId;
    const name = idOrName.replace(/^#/, '');
    return [...this.conversations.values()].find((c) => c.kind === 'channel' && c.name === name);
  }

  /** The app's direct message with these people, opened when it was not: [conversation, new]. */
  openConversation(userIds: readonly string[]): [Conversation, boolean] {
    const members = [...new Set(userIds)].sort();
    const existing = [...this.conversations.values()].find(
      (c) => c.kind !== 'channel' && sameMembers(c.members, members),
    );
    if (existing) return [existing, false];
    const kind = members.length === 1 ? 'im' : 'mpim';
    const id = `${kind === 'im' ? 'D' : 'G'}${randomId()}`;
    const conversation: Conversation = { id, name: id, kind, members, created: nowSeconds() };
    this.conversations.set(id, conversation);
    return [conversation, true];
  }

  nextTs(): string {
    this.sequence += 1;
    return `${String(nowSeconds())}.${String(this.sequence).padStart(6, '0')}`;
  }

  post(
    message: Omit<StoredMessage, 'ts' | 'updates' | 'deleted' | 'metadata'> & {
      metadata?: MessageMetadata | null;
    },
  ): StoredMessage {
    const stored: StoredMessage = {
      ...message,
      metadata: message.metadata ?? null,
      ts: this.nextTs(),
      updates: 0,
      deleted: false,
    };
    this.messages.push(stored);
    return stored;
  }

  message(channel: string, ts: string): StoredMessage | undefined {
    return this.messages.find((m) => m.channel === channel && m.ts === ts && !m.deleted);
  }

  allMessages(): StoredMessage[] {
    return this.messages.map((m) => ({ ...m, blocks: structuredClone(m.blocks) }));
  }
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((member, i) => member === b[i]);
}

function randomId(): string {
  return randomBytes(5).toString('hex').toUpperCase();
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A user as users.info and users.lookupByEmail answer, with the fields Slack documents. */
export function userObject(user: SeededUser): Record<string, unknown> {
  const realName = user.realName ?? user.name;
  return {
    id: user.id,
    team_id: TEAM.id,
    name: user.name,
    deleted: false,
    real_name: realName,
    tz: 'Europe/London',
    tz_label: 'Greenwich Mean Time',
    tz_offset: 0,
    profile: {
      email: user.email,
      real_name: realName,
      real_name_normalized: realName,
      display_name: user.name,
      display_name_normalized: user.name,
      team: TEAM.id,
    },
    is_admin: false,
    is_owner: false,
    is_bot: false,
    is_email_confirmed: user.emailConfirmed,
    is_app_user: false,
    updated: nowSeconds(),
  };
}

/** A message as chat.postMessage and chat.update answer it: the app's bot is its author. */
export function messageObject(message: StoredMessage): Record<string, unknown> {
  return {
    type: 'message',
    user: APP.botUserId,
    bot_id: APP.botId,
    app_id: APP.id,
    team: TEAM.id,
    text: message.text,
    ts: message.ts,
    ...(message.blocks.length > 0 ? { blocks: message.blocks } : {}),
    ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
  };
}
