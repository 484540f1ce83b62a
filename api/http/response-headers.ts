import type { RequestHandler } from 'express';

/**
 * Defaults for every answer, set before any route runs so that errors, 404s and answers from
 * middleware carry them too. API answers hold per-caller data (connections, audit, approvals),
 * which no browser or shared cache may keep; `nosniff` stops a browser from reading a JSON body
 * that quotes caller input as HTML or script. A route that means otherwise (the /docs assets)
 * sets its own Cache-Control over this one.
 */
export const responseHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};
