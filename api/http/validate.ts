import type { Request } from 'express';
import { z } from 'zod';
import { InvalidRequestError, type Issue } from '../errors.js';

type Location = 'body' | 'query' | 'path' | 'header';

function issuesOf(error: z.ZodError, location: Location): Issue[] {
  return error.issues.flatMap((issue): Issue[] => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: base ? `${base}.${key}` : key,
        message: `unknown ${location === 'query' ? 'parameter' : 'field'}`,
      }));
    }
    return [{ path: base || location, message: issue.message }];
  });
}

/**
 * Where `value` holds a NUL character, in a string or a property name. Postgres text and jsonb
 * cannot store one, so it is refused as the client's mistake before anything is written.
 */
function nulPath(value: unknown, path: string[] = []): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return path;
    const found = nulPath(item, [...path, key]);
    if (found) return found;
  }
  return null;
}

function invalid(location: Location, issues: Issue[]): InvalidRequestError {
  const first = issues[0];
  const summary = first ? `${first.path}: ${first.message}` : 'invalid input';
  return new InvalidRequestError(`Invalid request ${location} (${summary}).`, issues);
}

/** Parses one part of a request, turning every zod issue into a named, readable one. */
export function parse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: Location,
): z.infer<S> {
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}));
  if (!result.success) throw invalid(location, issuesOf(result.error, location));
  const nul = nulPath(result.data);
  if (nul) {
    throw invalid(location, [
      { path: nul.join('.') || location, message: 'must not contain the NUL character' },
    ]);
  }
  return result.data;
}

const emptyBody = z.strictObject({});

/**
 * For operations that take no body: none, or `{}`, is fine; anything else is refused rather
 * than ignored, so a caller who meant to send options learns they were not read.
 */
export function expectNoBody(req: Request): void {
  if (req.body !== undefined) {
    parse(emptyBody, req.body, 'body');
    return;
  }
  // A body the JSON parser skipped (another media type, or chunked) is a body all the same.
  if (Number(req.get('content-length') ?? '0') > 0 || req.get('transfer-encoding')) {
    throw new InvalidRequestError('This operation takes no request body.', [
      { path: 'body', message: 'must be empty' },
    ]);
  }
}
