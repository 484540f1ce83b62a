import type { RequestHandler } from 'express';
import { InvalidRequestError } from '../errors.js';

/** A query component decoded (`+` is a space), or null when it is not percent-encoded UTF-8. */
function decoded(component: string): string | null {
  try {
    return decodeURIComponent(component.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/**
 * Refuses a query holding an escape that is not percent-encoded UTF-8 (`%C3%28`, `%ff`, an encoded
 * surrogate) or a stray `%`. Node's query parser would read them as U+FFFD or as the raw text
 * without a word, so a caller would filter by, or store, another string than the one sent. The
 * parameter is named when its own name decodes.
 */
export const wellFormedQuery: RequestHandler = (req, _res, next) => {
  const url = req.originalUrl;
  const queryAt = url.indexOf('?');
  if (queryAt === -1) {
    next();
    return;
  }
  for (const pair of url.slice(queryAt + 1).split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decoded(equals === -1 ? pair : pair.slice(0, equals));
    if (name === null || (equals !== -1 && decoded(pair.slice(equals + 1)) === null)) {
      const path = name ?? 'query';
      throw new InvalidRequestError(`Invalid request query (${path}: not percent-encoded UTF-8).`, [
        { path, message: 'must be percent-encoded UTF-8' },
      ]);
    }
  }
  next();
};
