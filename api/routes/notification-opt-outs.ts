import { Router } from 'express';
import { z } from 'zod';
import { listNotificationOptOuts } from '../../activities/db/notification-opt-outs.js';
import { optOutAnswer } from '../../activities/notifications/answers.js';
import { changeNotificationOptOut } from '../../activities/notifications/changes.js';
import { OPT_OUT_KINDS, type OptOutKind } from '../../activities/notifications/kinds.js';
import { notificationKind, optOutPath } from '../../activities/notifications/route-input.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { notificationActorOf, refusedChange } from '../notifications/actor.js';
import { registerManagementOperation } from '../openapi/registry.js';

const optOutSchema = z
  .object({
    email: z.string(),
    kind: notificationKind,
    created_at: z.iso.datetime(),
    created_by: z.string().meta({
      description: 'The person themselves (`person:<email>`), the agent id of a key, or `cli`',
    }),
  })
  .meta({ id: 'NotificationOptOut' });

const OPT_OUTS_IN_WORDS =
  'An opt-out stops what is addressed to the person alone through that channel (e-mails to their address, Slack direct messages); posts in shared places (a group mailbox, a Slack or Teams channel) reach others too and go on. People opt out themselves in the console (`/console/<environment>/notifications`). Teams is told through shared channels only, so nobody opts out of it.';

const notOptedOut = {
  when: 'the person had not opted out of that channel',
  error: new NotFoundError('Opt-out of ada@example.com from slack'),
};

registerManagementOperation({
  method: 'get',
  path: '/v1/notification-opt-outs',
  operationId: 'list_notification_opt_outs',
  summary: 'List who opted out of which notification channel',
  description: `Every opt-out of the key's environment, by email. ${OPT_OUTS_IN_WORDS}`,
  scope: 'notifications:read',
  output: z.array(optOutSchema).meta({ id: 'list_notification_opt_outs_output' }),
});
registerManagementOperation({
  method: 'put',
  path: '/v1/notification-opt-outs/{email}/{kind}',
  operationId: 'set_notification_opt_out',
  summary: 'Opt a person out of a notification channel',
  description: `The person (by email, without case) is no longer told through this channel in the environment; setting it again changes nothing. ${OPT_OUTS_IN_WORDS} Recorded in the audit log (\`notifications.opt_outs\`).`,
  scope: 'notifications:manage',
  request: { params: optOutPath },
  output: z
    .object({ email: z.string(), kind: notificationKind, opted_out: z.literal(true) })
    .meta({ id: 'set_notification_opt_out_output' }),
});
registerManagementOperation({
  method: 'delete',
  path: '/v1/notification-opt-outs/{email}/{kind}',
  operationId: 'delete_notification_opt_out',
  summary: 'Opt a person back in to a notification channel',
  description:
    'The person is told through this channel again; one who had not opted out is 404. Recorded in the audit log.',
  scope: 'notifications:manage',
  request: { params: optOutPath },
  errorExamples: [notOptedOut],
  output: z
    .object({ email: z.string(), kind: notificationKind, opted_out: z.literal(false) })
    .meta({ id: 'delete_notification_opt_out_output' }),
});

/** The opt-out's path, its kind one a person can opt out of (Teams posts only to channels). */
function optOutOf(params: unknown): { email: string; kind: OptOutKind } {
  const path = parse(optOutPath, params, 'path');
  const kind = OPT_OUT_KINDS.find((candidate) => candidate === path.kind);
  if (!kind) {
    throw refusedChange(
      [
        {
          path: 'kind',
          message:
            'must be email or slack: Teams is told through shared channels only, where nobody can be left out',
        },
      ],
      'path',
    );
  }
  return { email: path.email.toLowerCase(), kind };
}

/** People's opt-outs of the notification channels, set for them by an operator. */
export function notificationOptOutRoutes(deps: ApiDeps): Router {
  const router = Router();
  const read = authorize({ operation: 'read', scope: 'notifications:read' });
  const manage = authorize({ operation: 'write', scope: 'notifications:manage' });

  router.get('/v1/notification-opt-outs', read, async (_req, res) => {
    const optOuts = await listNotificationOptOuts(deps.sql, callerOf(res).environmentId);
    res.json({ data: optOuts.map(optOutAnswer) });
  });

  router.put('/v1/notification-opt-outs/:email/:kind', manage, async (req, res) => {
    const { email, kind } = optOutOf(req.params);
    expectNoBody(req);
    await changeNotificationOptOut(deps.sql, notificationActorOf(res), email, kind, true);
    res.json({ data: { email, kind, opted_out: true } });
  });

  router.delete('/v1/notification-opt-outs/:email/:kind', manage, async (req, res) => {
    const { email, kind } = optOutOf(req.params);
    expectNoBody(req);
    if (!(await changeNotificationOptOut(deps.sql, notificationActorOf(res), email, kind, false))) {
      throw new NotFoundError(`Opt-out of ${email} from ${kind}`);
    }
    res.json({ data: { email, kind, opted_out: false } });
  });

  return router;
}
