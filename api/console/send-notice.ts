import type { Response } from 'express';
import { renderNotice } from './pages/layout.js';
import { consoleContextOf } from './context.js';
import { sendConsolePage } from './respond.js';

/**
 * A page that only says something, to the person signed in: an unknown item, a refused change.
 * Sections answer their own failures this way rather than throwing an API error, whose status
 * the console's error page would read as a form it could not read.
 */
export function sendConsoleNotice(
  res: Response,
  status: number,
  notice: { title: string; message: string; action?: { href: string; label: string } },
): void {
  const { branding, shown } = consoleContextOf(res);
  sendConsolePage(res, status, renderNotice({ branding, viewer: shown, ...notice }));
}
