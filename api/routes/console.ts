import { Router } from 'express';
import type { ApiDeps } from '../deps.js';
import { consoleAccess } from '../console/console-access.js';
import { inboxPages } from '../console/inbox/routes.js';
import { callsPages } from '../console/calls/calls-pages.js';
import { connectionsPages } from '../console/connections/connections-pages.js';
import { mcpAppPages } from '../console/apps/routes.js';
import { policyPages } from '../console/policies/routes.js';
import { notificationPages } from '../console/notifications/routes.js';
import { consoleContextOf } from '../console/context.js';
import { viewerMay } from '../people/console-viewer.js';
import { renderNotice } from '../console/pages/layout.js';
import { sendConsolePage } from '../console/respond.js';
import { resolveBranding } from '../connect/pages/theme.js';
import { DEFAULT_BRANDING } from '../connect/pages/types.js';
import { consoleErrors } from '../console/console-errors.js';

/**
 * The console, for signed-in people: every page below `/console/<environment>/` passes the
 * console's door (a live session of that environment; on POST, the form token) and then its own
 * role check. Each section is a router of its own folder in api/console/. A person is looking:
 * a page nobody has, and every failure, ends on a console page, never a JSON envelope.
 */
export function consoleRoutes(deps: ApiDeps): Router {
  const router = Router();
  const sections = Router({ mergeParams: true });
  // Each section's pages, in the order of the navigation.
  // The console's home: the inbox for those who decide, the calls for the others.
  sections.get('/', (_req, res) => {
    const { viewer, shown } = consoleContextOf(res);
    res.redirect(303, `${shown.base}/${viewerMay(viewer, 'decide') ? 'inbox' : 'calls'}`);
  });
  for (const pages of [
    inboxPages(deps),
    callsPages(deps),
    mcpAppPages(deps),
    policyPages(deps),
    connectionsPages(deps),
    notificationPages(deps),
  ])
    sections.use(pages);

  sections.use((_req, res) => {
    const context = res.locals.console;
    sendConsolePage(
      res,
      404,
      renderNotice({
        branding: context?.branding ?? resolveBranding(DEFAULT_BRANDING),
        ...(context ? { viewer: context.shown } : {}),
        title: 'No such page',
        message: 'The console has no page at this address.',
        ...(context
          ? { action: { href: `${context.shown.base}/inbox`, label: 'To the inbox' } }
          : {}),
      }),
    );
  });

  router.use('/console/:environment', ...consoleAccess(deps), sections);
  router.use('/console', consoleErrors);
  return router;
}
