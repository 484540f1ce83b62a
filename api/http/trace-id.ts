import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/**
 * Gives every request a trace id, echoed in `X-Trace-Id`, written in its log lines and (later)
 * its audit event. A caller's W3C `traceparent` is honoured so traces join across services.
 */
export const traceId: RequestHandler = (req, res, next) => {
  const incoming = TRACEPARENT.exec(req.get('traceparent') ?? '')?.[1];
  const id = incoming && !/^0+$/.test(incoming) ? incoming : randomBytes(16).toString('hex');
  res.locals.traceId = id;
  res.setHeader('X-Trace-Id', id);
  next();
};
