import { Router } from 'express';
import { z } from 'zod';
import { listNotificationChannels } from '../../activities/db/notification-channels.js';
import { channelAnswer } from '../../activities/notifications/answers.js';
import {
  changeNotificationChannel,
  removeNotificationChannel,
} from '../../activities/notifications/changes.js';
import {
  emailChannelBody,
  emailChannelInput,
  slackChannelBody,
  slackChannelInput,
  teamsChannelBody,
} from '../../activities/notifications/channel-input.js';
import { SLACK_API_BASE_URL } from '../../activities/notifications/kinds.js';
import { notificationKind } from '../../activities/notifications/route-input.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { notificationActorOf, refusedChange } from '../notifications/actor.js';
import { registerManagementOperation } from '../openapi/registry.js';

const common = {
  updated_at: z.iso.datetime(),
  updated_by: z.string().meta({ description: 'The agent id of the key that set it, or `cli`' }),
};

const channelSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('email'),
      host: z.string(),
      port: z.int(),
      security: z.enum(['starttls', 'tls', 'none']),
      username: z.string().nullable(),
      password_set: z.boolean().meta({ description: 'Whether a password is stored (never shown)' }),
      sender_address: z.string(),
      sender_name: z.string().nullable(),
      ...common,
    }),
    z.object({
      kind: z.literal('slack'),
      bot_token_set: z.literal(true).meta({ description: 'The bot token is stored (never shown)' }),
      signing_secret_set: z
        .literal(true)
        .meta({ description: 'The signing secret is stored (never shown)' }),
      api_base_url: z.string(),
      ...common,
    }),
    z.object({ kind: z.literal('teams'), ...common }),
  ])
  .meta({
    id: 'NotificationChannel',
    description: "A channel's settings; its secrets only say that they are set.",
  });

const channelPath = z.strictObject({ kind: notificationKind });

export const setChannelBody = z.union([emailChannelBody, slackChannelBody, teamsChannelBody]).meta({
  id: 'SetNotificationChannel',
  description:
    'The settings of the `{kind}` in the path: an SMTP relay for `email`, a Slack app for `slack`, `{}` for `teams`.',
});

const CHANNELS_IN_WORDS = `When a call is held for approval, the people asked are told where they already work, through the environment's channels: \`email\` (an SMTP relay), \`slack\` (a Slack app) and \`teams\` (Microsoft Teams workflow webhooks, named per route). Routes (\`/v1/notification-routes\`) say who is told through which. Secrets are write-only: answers say \`password_set\`, \`bot_token_set\`, \`signing_secret_set\`.`;

const noChannel = {
  when: 'the environment has no channel of that kind',
  error: new NotFoundError('Notification channel "slack"'),
};

registerManagementOperation({
  method: 'get',
  path: '/v1/notification-channels',
  operationId: 'list_notification_channels',
  summary: "List the environment's notification channels",
  description: `Every channel set in the key's environment, in the order email, slack, teams. ${CHANNELS_IN_WORDS}`,
  scope: 'notifications:read',
  output: z.array(channelSchema).meta({ id: 'list_notification_channels_output' }),
});
registerManagementOperation({
  method: 'put',
  path: '/v1/notification-channels/{kind}',
  operationId: 'set_notification_channel',
  summary: 'Set a notification channel',
  description: `Replaces the channel's settings. A secret left out keeps the stored one, except where it would go somewhere new: changing an SMTP relay's host needs its \`password\` again, changing Slack's \`api_base_url\` its \`bot_token\` and \`signing_secret\`. An SMTP host must be on a public address, and \`security: "none"\` is refused, unless NOTIFY_ALLOW_PRIVATE is set; Slack's API address is \`${SLACK_API_BASE_URL}\` unless it is. Recorded in the audit log (\`notifications.channels\`, \`via: "operator"\`), without secrets.`,
  scope: 'notifications:manage',
  request: {
    params: channelPath,
    body: { content: { 'application/json': { schema: setChannelBody } }, required: true },
  },
  output: channelSchema.meta({ id: 'set_notification_channel_output' }),
});
registerManagementOperation({
  method: 'delete',
  path: '/v1/notification-channels/{kind}',
  operationId: 'delete_notification_channel',
  summary: 'Remove a notification channel',
  description:
    'The channel and its secrets are deleted; its routes stay, and deliver nothing until the channel is set again. Recorded in the audit log.',
  scope: 'notifications:manage',
  request: { params: channelPath },
  errorExamples: [noChannel],
  output: z
    .object({ kind: notificationKind, deleted: z.literal(true) })
    .meta({ id: 'delete_notification_channel_output' }),
});

/**
 * The environment's notification channels: where approvers are told of held calls. Full keys
 * only by default (`notifications:*`), as the secrets set here send Gatehouse's mail and posts.
 */
export function notificationChannelRoutes(deps: ApiDeps): Router {
  const router = Router();
  const read = authorize({ operation: 'read', scope: 'notifications:read' });
  const manage = authorize({ operation: 'write', scope: 'notifications:manage' });
  const settings = {
    keyring: deps.config.encryption,
    allowPrivate: deps.config.notifications.allowPrivate,
  };

  router.get('/v1/notification-channels', read, async (_req, res) => {
    const channels = await listNotificationChannels(deps.sql, callerOf(res).environmentId);
    res.json({ data: channels.map(channelAnswer) });
  });

  router.put('/v1/notification-channels/:kind', manage, async (req, res) => {
    const { kind } = parse(channelPath, req.params, 'path');
    // The body is the settings of the kind the path names.
    const input =
      kind === 'email'
        ? emailChannelInput(parse(emailChannelBody, req.body, 'body'))
        : kind === 'slack'
          ? slackChannelInput(parse(slackChannelBody, req.body, 'body'))
          : (parse(teamsChannelBody, req.body, 'body'), { kind: 'teams' as const });
    const result = await changeNotificationChannel(
      deps.sql,
      settings,
      notificationActorOf(res),
      input,
    );
    if (!result.ok) throw refusedChange(result.issues, 'body');
    // Never the secrets: the answer is what the audit log records.
    req.log.info({ kind }, 'notification channel set');
    res.json({ data: result.value });
  });

  router.delete('/v1/notification-channels/:kind', manage, async (req, res) => {
    const { kind } = parse(channelPath, req.params, 'path');
    expectNoBody(req);
    if (!(await removeNotificationChannel(deps.sql, notificationActorOf(res), kind))) {
      throw new NotFoundError(`Notification channel "${kind}"`);
    }
    req.log.info({ kind }, 'notification channel removed');
    res.json({ data: { kind, deleted: true } });
  });

  return router;
}
