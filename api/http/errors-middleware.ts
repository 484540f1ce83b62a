import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import {
  ApiError,
  InvalidRequestError,
  MethodNotAllowedError,
  internalError,
  serviceUnavailableFrom,
} from '../errors.js';
import type { RouteTable } from './route-table.js';

/** Shape of the errors body-parser raises; it marks them with `type` and `status`. */
interface BodyParserError {
  type: string;
  status: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { type?: unknown }).type === 'string' &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}

function fromBodyParser(err: BodyParserError, limit: number): ApiError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      // JSON.parse's own message quotes the body, which may hold a secret: never echo it.
      return new InvalidRequestError('The request body is not valid JSON.');
    case 'entity.too.large':
      return new ApiError(
        'payload_too_large',
        `The request body exceeds the limit of ${limit} bytes.`,
        {
          limit_bytes: limit,
        },
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(
        'unsupported_media_type',
        'The request body encoding or charset is not supported.',
      );
    case 'request.aborted':
    case 'request.size.invalid':
      return new InvalidRequestError('The request body was incomplete.');
    default:
      return null;
  }
}

/**
 * The request's own faults that Express passes on with status 400 but no body-parser `type`: a
 * path parameter that is not percent-encoded UTF-8 (the router's URIError), and a body that its
 * Content-Encoding does not decode (zlib's error, forwarded by body-parser).
 */
function fromUntypedClientError(err: unknown, req: Request): ApiError | null {
  if (!(err instanceof Error) || (err as { status?: unknown }).status !== 400) return null;
  if (err instanceof URIError) {
    return new InvalidRequestError('A path parameter is not percent-encoded UTF-8.', [
      { path: 'path', message: 'must be percent-encoded UTF-8' },
    ]);
  }
  const encoding = req.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    return new InvalidRequestError(
      `The request body is not valid ${encoding} data, as its Content-Encoding says it is.`,
      [{ path: 'body', message: `could not be decoded as ${encoding}` }],
    );
  }
  return null;
}

/**
 * What no route answered: 405 with `Allow` when the path has routes for other methods (RFC 9110
 * §15.5.6), otherwise 404; in the same envelope as every other failure.
 */
export function notFound(routes: RouteTable): RequestHandler {
  return (req) => {
    const allowed = routes.methodsAt(req.path);
    if (allowed !== null && allowed.length > 0 && !allowed.includes(req.method)) {
      throw new MethodNotAllowedError(
        `${req.path} does not take ${req.method}; it takes ${allowed.join(', ')}.`,
        allowed,
      );
    }
    throw new ApiError('not_found', `No route for ${req.method} ${req.path}.`);
  };
}

/** The single place where thrown errors become HTTP answers. */
export function errorHandler(options: { bodyLimitBytes: number }): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const known =
      err instanceof ApiError
        ? err
        : isBodyParserError(err)
          ? fromBodyParser(err, options.bodyLimitBytes)
          : fromUntypedClientError(err, req);
    // Postgres or Temporal not answering is an outage, not a bug: 503, retryable.
    const unavailable = known ? null : serviceUnavailableFrom(err);
    const apiError = known ?? unavailable ?? internalError();
    if (unavailable) req.log.warn({ err }, 'a dependency did not answer');
    else if (!known) req.log.error({ err }, 'unhandled error');
    res.status(apiError.status).set(apiError.headers).json(apiError.toEnvelope());
  };
}
