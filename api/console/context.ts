import type { Request, Response } from 'express';
import type { Environment } from '../../activities/db/environments.js';
import type { ResolvedBranding } from '../connect/pages/theme.js';
import type { ConsoleViewer } from '../people/console-viewer.js';
import type { Viewer } from './pages/layout.js';

/** What every console page knows once its request passed the console's door (console-access.ts). */
export interface ConsoleContext {
  environment: Pick<Environment, 'id' | 'name'>;
  viewer: ConsoleViewer;
  /** The header's view of the person, with the form token every form carries. */
  shown: Viewer;
  branding: ResolvedBranding;
}

export function consoleContextOf(res: Response): ConsoleContext {
  const context = res.locals.console;
  // Mounted behind consoleAccess: a page reached without it is a wiring mistake, not a request's.
  if (!context) throw new Error('console page reached without the console access check');
  return context;
}

/** The form fields a console POST sent (urlencoded), or none. */
export function formOf(req: Request): Record<string, unknown> {
  return req.is('application/x-www-form-urlencoded') && typeof req.body === 'object' && req.body
    ? (req.body as Record<string, unknown>)
    : {};
}
