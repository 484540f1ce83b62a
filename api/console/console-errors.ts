import type { ErrorRequestHandler } from 'express';
import { resolveBranding } from '../connect/pages/theme.js';
import { DEFAULT_BRANDING } from '../connect/pages/types.js';
import { ApiError, ServiceUnavailableError, serviceUnavailableFrom } from '../errors.js';
import { renderNotice } from './pages/layout.js';
import { sendConsolePage } from './respond.js';

/**
 * A person is looking: every failure of a console page, or of signing in and out, ends on a
 * console page, never a JSON envelope. A dependency that did not answer (Postgres, Temporal, the
 * identity provider) is a 503 with its Retry-After; a form the parser refused is the request's
 * fault; anything else is a 500 that says nothing more.
 */
export const consoleErrors: ErrorRequestHandler = (err: unknown, req, res, next) => {
  if (res.headersSent) {
    next(err);
    return;
  }
  const context = res.locals.console;
  const page = (status: number, title: string, message: string) => {
    sendConsolePage(
      res,
      status,
      renderNotice({
        branding: context?.branding ?? resolveBranding(DEFAULT_BRANDING),
        ...(context ? { viewer: context.shown } : {}),
        title,
        message,
      }),
    );
  };
  // The service's own refusals say what went wrong; a 503 keeps its Retry-After.
  if (err instanceof ApiError && err.status < 500) {
    page(err.status, 'That could not be done', err.message);
    return;
  }
  if (err instanceof ServiceUnavailableError) {
    req.log.warn({ err }, 'console page: a dependency did not answer');
    res.set(err.headers);
    page(503, 'Try again in a moment', err.message);
    return;
  }
  const status =
    err !== null && typeof err === 'object' && 'status' in err && typeof err.status === 'number'
      ? err.status
      : 500;
  // The form parser's refusals (too large, bad encoding) are the request's fault.
  if (status >= 400 && status < 500) {
    page(status, 'That form could not be read', 'Nothing was changed.');
    return;
  }
  const unavailable = serviceUnavailableFrom(err);
  if (unavailable) {
    req.log.warn({ err }, 'console page: a dependency did not answer');
    res.set(unavailable.headers);
    page(503, 'Try again in a moment', unavailable.message);
    return;
  }
  req.log.error({ err }, 'console page failed');
  page(
    500,
    'Something went wrong',
    'Nothing more is known here; the request log has the trace id.',
  );
};
