import net from 'node:net';
import { z } from 'zod';
import type { NotificationChannelInput, SmtpSecurity } from '../db/notification-channels.js';
import { normalSlackApiBaseUrl } from './channel-addresses.js';
import { SLACK_API_BASE_URL } from './kinds.js';

/**
 * What the API and the CLI accept as a channel's settings, per kind. The address rules are checked
 * apart (`channel-addresses.ts`), as they need DNS and the NOTIFY_ALLOW_PRIVATE setting.
 */

/** No control characters: a sender name or user name goes into SMTP commands and headers. */
const NO_CONTROL = /^[^\p{Cc}]*$/u;

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** The port each security is usually served on: submission with STARTTLS, SMTPS, plain SMTP. */
export const DEFAULT_SMTP_PORTS: Record<SmtpSecurity, number> = {
  starttls: 587,
  tls: 465,
  none: 25,
};

const secret = (what: string, max: number) =>
  z
    .string()
    .min(1, { message: 'must not be empty' })
    .max(max)
    .meta({ description: `${what}. Write-only: never returned, never logged.` });

export const emailChannelBody = z
  .strictObject({
    host: z
      .string()
      .refine((value) => HOST_NAME.test(value) || net.isIP(value) !== 0, {
        message: 'must be a host name or an IP address (no scheme, no port)',
      })
      .meta({
        description:
          "The SMTP relay's host name (or IP address). On a public address only, unless NOTIFY_ALLOW_PRIVATE is set.",
        example: 'smtp.example.com',
      }),
    port: z.int().min(1).max(65535).optional().meta({
      description: 'Default: 587 with starttls, 465 with tls, 25 with none.',
    }),
    security: z.enum(['starttls', 'tls', 'none']).default('starttls').meta({
      description:
        '`starttls` (upgrade, required), `tls` (TLS from the first byte) or `none` (plain SMTP: only for a relay on loopback or the private network, with NOTIFY_ALLOW_PRIVATE).',
    }),
    username: z
      .string()
      .min(1)
      .max(256)
      .regex(NO_CONTROL, { message: 'must not contain control characters' })
      .nullable()
      .optional()
      .meta({ description: 'The user to authenticate as; null or absent: no authentication.' }),
    password: secret('The password for `username`', 1024).nullable().optional().meta({
      description:
        'Write-only. Absent: keep the stored one (refused when the host changes, since it would be sent to another host); null: none.',
    }),
    sender_address: z
      .email()
      .max(320)
      .meta({ description: 'The From address of every message', example: 'approvals@example.com' }),
    sender_name: z
      .string()
      .min(1)
      .max(100)
      .regex(NO_CONTROL, { message: 'must not contain control characters' })
      .nullable()
      .optional()
      .meta({ description: 'The From name', example: 'Gatehouse approvals' }),
  })
  .refine((body) => !(typeof body.password === 'string' && !body.username), {
    path: ['password'],
    message: 'needs a username to be sent with',
  })
  .meta({
    id: 'SetEmailChannel',
    description: 'An SMTP relay, for `PUT /v1/notification-channels/email`.',
  });

export const slackChannelBody = z
  .strictObject({
    bot_token: z
      .string()
      .max(512)
      .regex(/^xoxb-[A-Za-z0-9-]+$/, { message: 'must be a bot token (xoxb-…)' })
      .optional()
      .meta({
        description:
          "The Slack app's bot token (`xoxb-…`, scopes `chat:write`, and `users:read.email` for direct messages). Write-only; absent: keep the stored one.",
      }),
    signing_secret: z
      .string()
      .regex(/^[0-9a-fA-F]{32,128}$/, {
        message: "must be the app's signing secret (hexadecimal, from its Basic Information)",
      })
      .optional()
      .meta({
        description:
          "The Slack app's signing secret, which checks what Slack sends back. Write-only; absent: keep the stored one.",
      }),
    api_base_url: z
      .string()
      .max(2048)
      .optional()
      .meta({
        description: `Slack's Web API address, \`${SLACK_API_BASE_URL}\`; another only with NOTIFY_ALLOW_PRIVATE (a stand-in in tests). Changing it needs the secrets again.`,
      }),
  })
  .meta({
    id: 'SetSlackChannel',
    description: 'A Slack app, for `PUT /v1/notification-channels/slack`.',
  });

export const teamsChannelBody = z.strictObject({}).meta({
  id: 'SetTeamsChannel',
  description:
    'Microsoft Teams has no setting of its own (each route names its workflow webhook): `{}` turns it on, for `PUT /v1/notification-channels/teams`.',
});

/** The settings, in the form the database module takes them. */
export function emailChannelInput(
  body: z.infer<typeof emailChannelBody>,
): NotificationChannelInput {
  return {
    kind: 'email',
    host: body.host.replace(/\.$/, ''),
    port: body.port ?? DEFAULT_SMTP_PORTS[body.security],
    security: body.security,
    username: body.username ?? null,
    password: body.password,
    senderAddress: body.sender_address,
    senderName: body.sender_name ?? null,
  };
}

export function slackChannelInput(
  body: z.infer<typeof slackChannelBody>,
): NotificationChannelInput {
  return {
    kind: 'slack',
    botToken: body.bot_token,
    signingSecret: body.signing_secret,
    apiBaseUrl: normalSlackApiBaseUrl(body.api_base_url ?? SLACK_API_BASE_URL),
  };
}
