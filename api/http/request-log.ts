import type { Response } from 'express';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { redactHeaders, serializeError, type Logger } from '../../infra/logger.js';

/** `scheme://authority` of an absolute URL (a Referer, a Location), so its path can be checked. */
const ABSOLUTE = /^([a-z][a-z\d+.-]*:\/\/[^/?#]*)(.*)$/i;

/** Sub-paths of a token route that are our own words, not data: `/start`. */
const ROUTE_WORDS = /^(\/[a-z]+)*\/?$/;

/**
 * The path as the router matches it: Express routes case-insensitively and a client may
 * percent-encode any character or double a slash, so `/CONNECT/<token>`, `/%63onnect/<token>`
 * and `//connect//<token>` must be recognised as the connect route they reach or resemble.
 */
function canonicalPath(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Not percent-encoded UTF-8: the router refuses it too; it is matched as it came.
  }
  return decoded.replace(/\/{2,}/g, '/').toLowerCase();
}

/**
 * Connect, decision-link and MCP session URLs carry secrets in the clear: the link token in the path, the
 * authorization code and state in a callback's query (the connect flow's and the console's). Logs get the route's shape, never
 * those values, whatever the case or encoding the URL was sent in. Other URLs are kept as sent.
 */
export function loggableUrl(url: string): string {
  const absolute = ABSOLUTE.exec(url);
  const origin = absolute?.[1] ?? '';
  const rest = absolute ? (absolute[2] ?? '') : url;
  const path = canonicalPath(rest.split(/[?#]/)[0] ?? '');
  // The connect flow's and the console sign-in's callbacks: an authorization code and state.
  const callback = /^\/(connect|console)\/callback\/?$/.exec(path);
  if (callback) return `${origin}/${callback[1] ?? ''}/callback`;
  const token = /^\/(connect|approvals\/review|mcp)\/[^/]+(\/.*)?$/.exec(path);
  if (!token) return url;
  const after = token[2] ?? '';
  const tail = ROUTE_WORDS.test(after) ? after.replace(/\/$/, '') : '/[…]';
  return `${origin}/${token[1] ?? ''}/[token]${tail}`;
}

/**
 * A URL in a header (Referer, Location) as it may be logged: route tokens hidden as above, and
 * no query at all: a redirect to the app's consent page carries the OAuth state, a redirect back
 * to a caller carries whatever that caller put there.
 */
function loggableReference(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return loggableUrl(value).split(/[?#]/)[0];
}

function loggableHeaders(headers: unknown, urlHeaders: readonly string[]): unknown {
  if (typeof headers !== 'object' || headers === null) return headers;
  const out = redactHeaders(headers as Record<string, unknown>);
  for (const name of urlHeaders) {
    if (out[name] !== undefined) out[name] = loggableReference(out[name]);
  }
  return out;
}

interface SerializedRequest {
  url: string;
  query?: unknown;
  params?: unknown;
  headers?: unknown;
  [key: string]: unknown;
}

interface SerializedResponse {
  headers?: unknown;
  [key: string]: unknown;
}

export function requestLog(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    genReqId: (_req, res) => (res as Response).locals.traceId,
    customProps: (_req, res) => ({ traceId: (res as Response).locals.traceId }),
    // A 4xx is the caller's mistake or an expected answer (approval_required, a favicon): info,
    // so the dev terminal (warnings and up) stays readable; the log file keeps every request.
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' },
    serializers: {
      req: (req: SerializedRequest) => {
        // Query and params repeat the URL's secrets in parsed form: left out.
        const rest = Object.fromEntries(
          Object.entries(req).filter(([key]) => key !== 'query' && key !== 'params'),
        );
        return {
          ...rest,
          url: loggableUrl(req.url),
          headers: loggableHeaders(req.headers, ['referer']),
        };
      },
      res: (res: SerializedResponse) => ({
        ...res,
        headers: loggableHeaders(res.headers, ['location', 'content-location']),
      }),
      err: serializeError,
    },
  });
}
