import { Router } from 'express';
import { z } from 'zod';
import { recordConsoleChange } from '../../../activities/audit/console-changes.js';
import { notificationChannelKinds } from '../../../activities/db/notification-channels.js';
import {
  addNotificationOptOut,
  optOutsOf,
  removeNotificationOptOut,
} from '../../../activities/db/notification-opt-outs.js';
import {
  listNotificationRoutes,
  routingRoutes,
} from '../../../activities/db/notification-routes.js';
import { listRoleMappings } from '../../../activities/db/role-mappings.js';
import { OPT_OUT_KINDS } from '../../../activities/notifications/kinds.js';
import { personReach } from '../../../activities/notifications/person-reach.js';
import type { ApiDeps } from '../../deps.js';
import { requireRole } from '../console-access.js';
import { consoleContextOf, formOf } from '../context.js';
import { sendConsolePage } from '../respond.js';
import { sendConsoleNotice } from '../send-notice.js';
import { renderNotificationsPage } from './notifications-page.js';

const optOutForm = z.object({
  kind: z.enum(OPT_OUT_KINDS),
  choice: z.enum(['out', 'in']),
});

const doneQuery = z.object({
  out: z.enum(OPT_OUT_KINDS).optional(),
  in: z.enum(OPT_OUT_KINDS).optional(),
});

/**
 * The Notifications section (`/console/<environment>/notifications`): every signed-in person sees
 * where they are told of the held calls that ask them (what is addressed to them alone, and the
 * shared places), and opts themselves out of e-mail or Slack, or back in. Only themselves: the
 * opt-out is keyed by the session's email, never a field of the form. Each change is an audit
 * event of the person.
 */
export function notificationPages(deps: ApiDeps): Router {
  const router = Router();

  router.get('/notifications', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const { session } = context.viewer;
    const environmentId = context.environment.id;
    const [routes, views, channels, mappings, optOuts] = await Promise.all([
      routingRoutes(deps.sql, environmentId),
      listNotificationRoutes(deps.sql, environmentId),
      notificationChannelKinds(deps.sql, environmentId),
      listRoleMappings(deps.sql, environmentId),
      optOutsOf(deps.sql, environmentId, [session.email]),
    ]);
    const reach = personReach({
      email: session.email,
      groups: session.groups,
      approverMappings: mappings
        .filter((mapping) => mapping.roles.includes('approver'))
        .map((mapping) => mapping.group),
      channels,
      routes,
    });
    const said = doneQuery.safeParse(req.query);
    const doneKind = said.success ? (said.data.out ?? said.data.in) : undefined;
    sendConsolePage(
      res,
      200,
      renderNotificationsPage({
        branding: context.branding,
        viewer: context.shown,
        reach,
        optedOut: optOuts.map((optOut) => optOut.kind),
        routes: views,
        ...(doneKind && said.success
          ? { done: { kind: doneKind, optedOut: said.data.out !== undefined } }
          : {}),
      }),
    );
  });

  router.post('/notifications', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const form = optOutForm.safeParse(formOf(req));
    if (!form.success) {
      sendConsoleNotice(res, 400, {
        title: 'That form could not be read',
        message: 'Nothing was changed. Open the page again and use its own buttons.',
        action: { href: `${context.shown.base}/notifications`, label: 'Notifications' },
      });
      return;
    }
    const { session } = context.viewer;
    const email = session.email.toLowerCase();
    const { kind, choice } = form.data;
    const changed =
      choice === 'out'
        ? await addNotificationOptOut(
            deps.sql,
            context.environment.id,
            email,
            kind,
            `person:${email}`,
          )
        : await removeNotificationOptOut(deps.sql, context.environment.id, email, kind);
    // Pressing the button twice (two tabs) changes nothing the second time, and records nothing.
    if (changed) {
      await recordConsoleChange(deps.sql, {
        environmentId: context.environment.id,
        actor: {
          issuer: session.issuer,
          subject: session.subject,
          name: session.name,
          email: session.email,
        },
        action: choice === 'out' ? 'console.notifications.opt_out' : 'console.notifications.opt_in',
        target: { kind, email },
        traceId: res.locals.traceId,
      });
      req.log.info({ personId: session.personId, kind, choice }, 'notification opt-out changed');
    }
    res.redirect(303, `${context.shown.base}/notifications?${choice}=${kind}`);
  });

  return router;
}
