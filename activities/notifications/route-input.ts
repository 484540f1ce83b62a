import { z } from 'zod';
import type { RouteTargetInput, RouteTargetView } from '../db/notification-routes.js';
import { EVERYONE_ASKED, GROUP_PREFIX, PERSON_PREFIX } from './audience.js';
import { KIND_LABELS, NOTIFICATION_KINDS, type NotificationKind } from './kinds.js';

/**
 * What the API and the CLI accept as routes: the audience (a path segment), the kind, and the
 * audience's targets of that kind. A Teams webhook's address rule is checked apart
 * (`teamsWebhookUrlProblem`), as it needs DNS.
 */

/** What a group name in a role mapping may hold: the identity provider's names, as given. */
const GROUP_NAME_MAX = 200;

/** Characters as Postgres and JSON Schema count them: code points. */
function characterCount(value: string): number {
  return Array.from(value).length;
}

const email = z.email();

export const audience = z
  .string()
  .refine(
    (value) => {
      if (value === EVERYONE_ASKED) return true;
      if (value.startsWith(PERSON_PREFIX)) {
        return email.max(320).safeParse(value.slice(PERSON_PREFIX.length)).success;
      }
      if (!value.startsWith(GROUP_PREFIX)) return false;
      const name = value.slice(GROUP_PREFIX.length);
      return (
        characterCount(name) >= 1 && characterCount(name) <= GROUP_NAME_MAX && !/\p{Cc}/u.test(name)
      );
    },
    {
      message: `must be * (everyone asked), group:<name> (1 to ${String(GROUP_NAME_MAX)} characters, no control characters) or person:<email>`,
    },
  )
  .meta({
    description:
      "Who is told, as a policy's `requested_from` names them: `group:<name>` (the group exactly as the identity provider's `groups` claim names it), `person:<email>` (compared without case), or `*` for every entry an approval asks. URL-encoded in the path.",
    example: 'group:finance',
  });

export const notificationKind = z.enum(NOTIFICATION_KINDS).meta({
  description: '`email` (an SMTP relay), `slack` (a Slack app) or `teams` (Microsoft Teams)',
});

export const routePath = z.strictObject({ audience, kind: notificationKind });

/** A Slack channel's id (public `C…`, older private `G…`), as Slack's "Copy link" ends. */
const SLACK_CHANNEL = /^[CG][A-Z0-9]{8,20}$/;

const TARGET_FIELDS = ['each_person', 'address', 'slack_channel', 'webhook_url'] as const;

/**
 * One object naming exactly one target, rather than a union of four: a union's refusal says only
 * "invalid input", where this names the field at fault.
 */
const targetSchema = z
  .strictObject({
    each_person: z.literal(true).optional().meta({
      description:
        "email: each person's own address; slack: a direct message to each person, found by their e-mail",
    }),
    address: z
      .email()
      .max(320)
      .optional()
      .meta({ description: 'email: one fixed address, such as a group mailbox' }),
    slack_channel: z
      .string()
      .regex(SLACK_CHANNEL, { message: 'must be a Slack channel id (C…)' })
      .optional()
      .meta({ description: 'slack: a post in this channel (its id, `C…`); invite the app first' }),
    webhook_url: z.string().max(4096).optional().meta({
      description:
        'teams: a post through this Teams workflow webhook ("When a Teams webhook request is received"). Write-only: it carries the signature that authorises posting, so answers show its host only.',
    }),
  })
  .refine((target) => TARGET_FIELDS.filter((field) => target[field] !== undefined).length === 1, {
    message: `must name exactly one of ${TARGET_FIELDS.join(', ')}`,
  })
  .meta({ description: 'One target: exactly one of its fields.' });

export const setRoutesBody = z
  .strictObject({
    targets: z.array(targetSchema).max(20).meta({
      description:
        'Where the audience is told through this channel; each target once. An empty list removes its routes of this channel.',
    }),
  })
  .meta({
    id: 'SetNotificationRoutes',
    description:
      "Replaces the audience's routes of one channel: email takes `each_person` and `address`, slack `each_person` and `slack_channel`, teams `webhook_url`.",
    example: { targets: [{ each_person: true }, { address: 'finance@example.com' }] },
  });

export type RouteTargetBody = z.infer<typeof targetSchema>;

const FITS: Record<NotificationKind, readonly string[]> = {
  email: ['each_person', 'address'],
  slack: ['each_person', 'slack_channel'],
  teams: ['webhook_url'],
};

/**
 * The targets as the database module takes them, or the problems with them, by their place in
 * the list: a target of another channel, or one named twice.
 */
export function routeTargets(
  kind: NotificationKind,
  targets: readonly RouteTargetBody[],
):
  | { ok: true; targets: RouteTargetInput[] }
  | { ok: false; issues: { path: string; message: string }[] } {
  const issues: { path: string; message: string }[] = [];
  const seen = new Set<string>();
  const kept: RouteTargetInput[] = [];
  targets.forEach((target, index) => {
    const field = TARGET_FIELDS.find((name) => target[name] !== undefined);
    const path = `targets.${String(index)}`;
    if (!field || !FITS[kind].includes(field)) {
      issues.push({
        path,
        message: `${KIND_LABELS[kind]} takes ${FITS[kind].join(' or ')}, not ${field ?? 'nothing'}`,
      });
      return;
    }
    const input: RouteTargetInput =
      target.address !== undefined
        ? { type: 'address', address: target.address }
        : target.slack_channel !== undefined
          ? { type: 'slack_channel', channel: target.slack_channel }
          : target.webhook_url !== undefined
            ? { type: 'webhook', url: target.webhook_url }
            : { type: 'each_person' };
    const same =
      input.type === 'address'
        ? `address:${input.address.toLowerCase()}`
        : input.type === 'slack_channel'
          ? `channel:${input.channel}`
          : input.type === 'webhook'
            ? `webhook:${input.url}`
            : 'each_person';
    if (seen.has(same)) {
      issues.push({ path, message: 'is named twice' });
      return;
    }
    seen.add(same);
    kept.push(input);
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, targets: kept };
}

/** A route's target as answers show it (a Teams webhook by its host only). */
export function presentTarget(
  target: RouteTargetView,
):
  | { each_person: true }
  | { address: string }
  | { slack_channel: string }
  | { webhook_host: string } {
  switch (target.type) {
    case 'each_person':
      return { each_person: true };
    case 'address':
      return { address: target.address };
    case 'slack_channel':
      return { slack_channel: target.channel };
    case 'webhook':
      return { webhook_host: target.host };
  }
}

export const optOutPath = z.strictObject({
  email: z.email().max(320).meta({
    description: "The person's email (compared without case)",
    example: 'ada@example.com',
  }),
  kind: notificationKind,
});
