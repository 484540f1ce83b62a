import express, { type RequestHandler } from 'express';
import { ENVIRONMENT_NAME, findEnvironmentByName } from '../../activities/db/environments.js';
import type { ApiDeps } from '../deps.js';
import { brandingOf } from '../connect/link-check.js';
import { resolveBranding } from '../connect/pages/theme.js';
import { DEFAULT_BRANDING } from '../connect/pages/types.js';
import { consoleFormToken, consoleFormTokenMatches } from '../people/form-token.js';
import { consoleViewer, viewerMay, type ROLE_ALLOWS } from '../people/console-viewer.js';
import { crossSite } from '../people/same-origin.js';
import { renderNotice } from './pages/layout.js';
import { sendConsolePage } from './respond.js';
import { consoleContextOf } from './context.js';

/**
 * The console's door, in front of every page of `/console/<environment>/…`: the environment must
 * exist, the request must carry a live session of that environment (else a page is sent to
 * sign-in and back), and every POST must come from the console's own pages (same origin, the
 * session's form token). What each page needs beyond a session is its own `requireRole`.
 */
export function consoleAccess(deps: ApiDeps): RequestHandler[] {
  const { config, sql } = deps;
  const fallback = resolveBranding(DEFAULT_BRANDING);
  const forms = express.urlencoded({ extended: false, limit: '256kb', parameterLimit: 50 });
  const door: RequestHandler = async (req, res, next) => {
    const param: unknown = req.params.environment;
    const name = typeof param === 'string' ? param : '';
    const environment = ENVIRONMENT_NAME.test(name) ? await findEnvironmentByName(sql, name) : null;
    if (!environment) {
      sendConsolePage(
        res,
        404,
        renderNotice({
          branding: fallback,
          title: 'No such environment',
          message: 'There is no environment by that name here.',
        }),
      );
      return;
    }
    const viewer = config.people.oidc ? await consoleViewer(sql, config, req, environment) : null;
    if (!viewer) {
      if (req.method === 'GET' || req.method === 'HEAD') {
        const back = encodeURIComponent(req.originalUrl.split('?')[0] ?? '');
        res.redirect(
          303,
          `${config.api.publicUrl}/console/${environment.name}/sign-in?return_to=${back}`,
        );
        return;
      }
      sendConsolePage(
        res,
        401,
        renderNotice({
          branding: fallback,
          title: 'Sign in first',
          message: 'Your session has ended (or never began), so nothing was changed.',
          action: {
            href: `${config.api.publicUrl}/console/${environment.name}/sign-in`,
            label: 'Sign in',
          },
        }),
      );
      return;
    }
    const branding = resolveBranding(await brandingOf(sql, environment.id));
    const base = `${config.api.publicUrl}/console/${environment.name}`;
    res.locals.console = {
      environment: { id: environment.id, name: environment.name },
      viewer,
      branding,
      shown: {
        name: viewer.session.name,
        email: viewer.session.email,
        roles: viewer.roles,
        environment: environment.name,
        base,
        formToken: consoleFormToken(viewer.session),
      },
    };
    next();
  };
  const sameConsole: RequestHandler = (req, res, next) => {
    if (req.method !== 'POST') {
      next();
      return;
    }
    const { viewer, branding, shown } = consoleContextOf(res);
    const form = (req.body ?? {}) as Record<string, unknown>;
    if (
      crossSite(req, config.api.publicUrl) ||
      !consoleFormTokenMatches(viewer.session, form.csrf)
    ) {
      req.log.warn({ personId: viewer.session.personId }, 'console form without its token refused');
      sendConsolePage(
        res,
        403,
        renderNotice({
          branding,
          viewer: shown,
          title: 'That form was not sent from this console',
          message: 'Nothing was changed. Open the page again and use its own buttons.',
        }),
      );
      return;
    }
    next();
  };
  return [door, forms, sameConsole];
}

/** Only people holding one of the roles that may do `what` get past. */
export function requireRole(what: keyof typeof ROLE_ALLOWS): RequestHandler {
  return (_req, res, next) => {
    const { viewer, branding, shown } = consoleContextOf(res);
    if (viewerMay(viewer, what)) {
      next();
      return;
    }
    sendConsolePage(
      res,
      403,
      renderNotice({
        branding,
        viewer: shown,
        title: 'Not one of your tasks',
        message: `Your roles here (${viewer.roles.join(', ')}) do not include this page. An administrator maps groups to roles.`,
      }),
    );
  };
}
