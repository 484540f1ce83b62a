import type { Response } from 'express';
import { pinoHttp, type HttpLogger } from 'pino-http';
import type { Logger } from '../../infra/logger.js';

/**
 * Connect and decision-link URLs carry secrets in the clear: the link token in the path, the
 * authorization code and state in the callback's query. Logs get the route's shape, never
 * those values.
 */
export function loggableUrl(url: string): string {
  const path = url.split('?')[0] ?? '';
  if (path.startsWith('/approvals/review/')) {
    return path.replace(/^\/approvals\/review\/[^/]+/, '/approvals/review/[token]');
  }
  if (!path.startsWith('/connect/')) return url;
  return path.replace(/^\/connect\/(?!callback$)[^/]+/, '/connect/[token]');
}

interface SerializedRequest {
  url: string;
  query?: unknown;
  params?: unknown;
  [key: string]: unknown;
}

export function requestLog(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    genReqId: (_req, res) => (res as Response).locals.traceId,
    customProps: (_req, res) => ({ traceId: (res as Response).locals.traceId }),
    customLogLevel: (_req, res, err) =>
      err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    autoLogging: { ignore: (req) => req.url === '/healthz' },
    serializers: {
      req: (req: SerializedRequest) => {
        // Query and params repeat the URL's secrets in parsed form: left out.
        const rest = Object.fromEntries(
          Object.entries(req).filter(([key]) => key !== 'query' && key !== 'params'),
        );
        return { ...rest, url: loggableUrl(req.url) };
      },
    },
  });
}
