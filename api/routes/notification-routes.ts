import { Router } from 'express';
import { z } from 'zod';
import {
  hasNotificationRoutes,
  listNotificationRoutes,
} from '../../activities/db/notification-routes.js';
import { normalAudience } from '../../activities/notifications/audience.js';
import { routesAnswer } from '../../activities/notifications/answers.js';
import { changeNotificationRoutes } from '../../activities/notifications/changes.js';
import {
  notificationKind,
  routePath,
  setRoutesBody,
} from '../../activities/notifications/route-input.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { notificationActorOf, refusedChange } from '../notifications/actor.js';
import { registerManagementOperation } from '../openapi/registry.js';

const targetShown = z.union([
  z.object({ each_person: z.literal(true) }),
  z.object({ address: z.string() }),
  z.object({ slack_channel: z.string() }),
  z
    .object({ webhook_host: z.string() })
    .meta({ description: 'A Teams workflow webhook, by its host: the URL is write-only' }),
]);

const routesSchema = z
  .object({
    audience: z.string(),
    kind: notificationKind,
    targets: z.array(targetShown),
  })
  .meta({ id: 'NotificationRoutes', description: "An audience's routes of one channel." });

const ROUTES_IN_WORDS =
  "A route tells an audience, as a policy's `requested_from` names it (`group:<name>`, `person:<email>`, or `*` for every entry asked), through a channel: `each_person` (e-mail: each person's own address; Slack: a direct message found by their e-mail), a fixed e-mail `address` (a group mailbox), a `slack_channel`, or a Teams `webhook_url`. Routes add up, and one destination is told once per approval. A group's people are those whose groups at their last sign-in to the console include it: someone who never signed in is unknown to Gatehouse, reached only through a group mailbox or channel. When an approval names nobody, every approver is asked: `*` routes and the routes of groups holding the `approver` role apply.";

const unrouted = {
  when: 'the audience has no routes of that kind',
  error: new NotFoundError('Notification routes of "group:finance" through slack'),
};

registerManagementOperation({
  method: 'get',
  path: '/v1/notification-routes',
  operationId: 'list_notification_routes',
  summary: 'List who is told of held calls through which channel',
  description: `Every route of the key's environment, by audience and channel; Teams webhooks by their host only. ${ROUTES_IN_WORDS}`,
  scope: 'notifications:read',
  output: z.array(routesSchema).meta({ id: 'list_notification_routes_output' }),
});
registerManagementOperation({
  method: 'put',
  path: '/v1/notification-routes/{audience}/{kind}',
  operationId: 'set_notification_routes',
  summary: "Replace an audience's routes of one channel",
  description: `The audience is told through this channel exactly at \`targets\` from now on (an empty list removes its routes of the channel); its routes of other channels stay, so a Teams webhook need not be sent again to change an e-mail route. A Teams webhook URL must be https on a public address unless NOTIFY_ALLOW_PRIVATE is set. Recorded in the audit log (\`notifications.routes\`), Teams webhooks by their host only.`,
  scope: 'notifications:manage',
  request: {
    params: routePath,
    body: { content: { 'application/json': { schema: setRoutesBody } }, required: true },
  },
  output: routesSchema.meta({ id: 'set_notification_routes_output' }),
});
registerManagementOperation({
  method: 'delete',
  path: '/v1/notification-routes/{audience}/{kind}',
  operationId: 'delete_notification_routes',
  summary: "Remove an audience's routes of one channel",
  description:
    'As `PUT` with no targets, but an audience with no routes of that channel is 404, so a mistyped audience is noticed. Recorded in the audit log.',
  scope: 'notifications:manage',
  request: { params: routePath },
  errorExamples: [unrouted],
  output: z
    .object({ audience: z.string(), kind: notificationKind, deleted: z.literal(true) })
    .meta({ id: 'delete_notification_routes_output' }),
});

/**
 * Who is told of held calls through which channel, per audience and channel. Express decodes the
 * path, so `group%3AFinance%20Approvers` arrives whole; `*` needs no encoding.
 */
export function notificationRouteRoutes(deps: ApiDeps): Router {
  const router = Router();
  const read = authorize({ operation: 'read', scope: 'notifications:read' });
  const manage = authorize({ operation: 'write', scope: 'notifications:manage' });
  const settings = {
    keyring: deps.config.encryption,
    allowPrivate: deps.config.notifications.allowPrivate,
  };

  router.get('/v1/notification-routes', read, async (_req, res) => {
    const routes = await listNotificationRoutes(deps.sql, callerOf(res).environmentId);
    res.json({ data: routesAnswer(routes) });
  });

  router.put('/v1/notification-routes/:audience/:kind', manage, async (req, res) => {
    const path = parse(routePath, req.params, 'path');
    const audience = normalAudience(path.audience);
    const body = parse(setRoutesBody, req.body, 'body');
    const result = await changeNotificationRoutes(
      deps.sql,
      settings,
      notificationActorOf(res),
      audience,
      path.kind,
      body,
    );
    if (!result.ok) throw refusedChange(result.issues, 'body');
    // The answer shows Teams webhooks by host; the request's URLs are never logged.
    req.log.info({ audience, kind: path.kind }, 'notification routes set');
    res.json({ data: result.value });
  });

  router.delete('/v1/notification-routes/:audience/:kind', manage, async (req, res) => {
    const path = parse(routePath, req.params, 'path');
    const audience = normalAudience(path.audience);
    expectNoBody(req);
    const actor = notificationActorOf(res);
    if (!(await hasNotificationRoutes(deps.sql, actor.environmentId, audience, path.kind))) {
      throw new NotFoundError(`Notification routes of "${audience}" through ${path.kind}`);
    }
    await changeNotificationRoutes(deps.sql, settings, actor, audience, path.kind, {
      targets: [],
    });
    req.log.info({ audience, kind: path.kind }, 'notification routes removed');
    res.json({ data: { audience, kind: path.kind, deleted: true } });
  });

  return router;
}
